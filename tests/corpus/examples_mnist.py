# Follows the shape of: pytorch/examples "Basic MNIST Example" — https://github.com/pytorch/examples/tree/main/mnist (mnist/main.py)
# What it exercises: an nn.Module CNN (two convs, max-pool, two dropouts, two linears) ending in F.log_softmax, F.nll_loss, train()/test() functions taking args/model/device/loader, model.train() and model.eval(), optimizer.zero_grad()/loss.backward()/optimizer.step() with Adadelta, test() under torch.no_grad() with reduction='sum' and argmax accuracy, a StepLR scheduler stepped per epoch, argparse in main() behind `if __name__ == '__main__':`.
# Adapted to run offline in a few seconds: random 1x28x28 images (normalised with the MNIST mean/std) and random labels in a TensorDataset instead of torchvision's MNIST download; 48 training and 32 test images with batch size 16 (3 and 2 batches) instead of 60000/10000 with 64/1000; 2 epochs instead of 14; log every batch; CPU only (accelerator flags kept but ignored); --save-model writes into a temporary directory.
import argparse
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def train(args, model, device, train_loader, optimizer, epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % args.log_interval == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
            if args.dry_run:
                break


def test(model, device, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction='sum').item()  # add up the batch's loss
            pred = output.argmax(dim=1, keepdim=True)  # class with the highest log-probability
            correct += pred.eq(target.view_as(pred)).sum().item()

    test_loss /= len(test_loader.dataset)

    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, len(test_loader.dataset),
        100. * correct / len(test_loader.dataset)))


def fake_mnist(num_images, generator):
    """Random images shaped and normalised like MNIST digits, with random labels."""
    images = torch.rand(num_images, 1, 28, 28, generator=generator)
    images = (images - 0.1307) / 0.3081
    labels = torch.randint(0, 10, (num_images,), generator=generator)
    return TensorDataset(images, labels)


def main():
    # Training settings
    parser = argparse.ArgumentParser(description='PyTorch MNIST Example (synthetic data)')
    parser.add_argument('--batch-size', type=int, default=16, metavar='N',
                        help='input batch size for training (default: 16)')
    parser.add_argument('--test-batch-size', type=int, default=16, metavar='N',
                        help='input batch size for testing (default: 16)')
    parser.add_argument('--epochs', type=int, default=2, metavar='N',
                        help='number of epochs to train (default: 2)')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR',
                        help='learning rate (default: 1.0)')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M',
                        help='learning rate step gamma (default: 0.7)')
    parser.add_argument('--no-accel', action='store_true',
                        help='disables accelerator (always off here)')
    parser.add_argument('--dry-run', action='store_true',
                        help='quickly check a single pass')
    parser.add_argument('--seed', type=int, default=1, metavar='S',
                        help='random seed (default: 1)')
    parser.add_argument('--log-interval', type=int, default=1, metavar='N',
                        help='how many batches to wait before logging training status')
    parser.add_argument('--save-model', action='store_true',
                        help='for saving the current model (into a temporary directory)')
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}

    data_generator = torch.Generator().manual_seed(args.seed)
    dataset1 = fake_mnist(48, data_generator)
    dataset2 = fake_mnist(32, data_generator)
    train_loader = DataLoader(dataset1, **train_kwargs)
    test_loader = DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        test(model, device, test_loader)
        scheduler.step()

    if args.save_model:
        with tempfile.TemporaryDirectory() as tmp:
            torch.save(model.state_dict(), os.path.join(tmp, "mnist_cnn.pt"))


if __name__ == '__main__':
    main()
