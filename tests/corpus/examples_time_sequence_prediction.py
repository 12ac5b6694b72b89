# Follows the shape of: pytorch/examples "Time Sequence Prediction" — https://github.com/pytorch/examples/tree/main/time_sequence_prediction (time_sequence_prediction/train.py and generate_sine_wave.py)
# What it exercises: an nn.Module with two nn.LSTMCell layers and a Linear unrolled over input.split(1, dim=1) with a `future` loop that feeds predictions back in, torch.cat of the outputs, a double-precision model (.double()), nn.MSELoss, optim.LBFGS driven by a nested `closure()` that zeroes grads, runs forward, prints and calls loss.backward() (called several times per step), and a test prediction under torch.no_grad() followed by .detach().numpy().
# Adapted to run offline in a few seconds: the sine-wave data is generated in memory (the same recipe: shifted integer ranges through sin(x / T)) instead of being written to traindata.pt by a separate script; 8 waves of 21 samples (sequence length 20) instead of 100 of 1000; 2 LBFGS steps with max_iter=6 instead of 15 steps with the default 20; future=10 instead of 1000; hidden size 51 kept; no matplotlib plots or PDF files; CPU only; seeds fixed.
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # keep going on our own predictions
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


def make_sine_waves(T=20, L=21, N=8):
    """N sine waves of length L, each starting at a random phase."""
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype('float64')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=2, help='steps to run')
    opt = parser.parse_args()
    # fix the random seeds
    np.random.seed(3)
    torch.manual_seed(0)
    # build the data: the first 3 waves are kept for testing
    data = torch.from_numpy(make_sine_waves())
    input = data[3:, :-1]
    target = data[3:, 1:]
    test_input = data[:3, :-1]
    test_target = data[:3, 1:]
    # build the model
    seq = Sequence()
    seq.double()
    criterion = nn.MSELoss()
    # LBFGS needs the whole data set at once, which is small here
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=6)
    # train
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # predict, without tracking gradients
        with torch.no_grad():
            future = 10
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
        print('predicted tail of wave 0:', np.round(y[0, -3:], 4))
