# Follows the shape of: pytorch/examples "Word-level Language Modeling using RNN and Transformer" — https://github.com/pytorch/examples/tree/main/word_language_model (word_language_model/main.py, model.py, data.py)
# What it exercises: an RNNModel (Embedding encoder, dropout, nn.LSTM with 2 layers, Linear decoder, optional weight tying) returning log_softmax and the hidden state, init_hidden via weight.new_zeros, batchify/get_batch over a 1-D token tensor, repackage_hidden (recursive .detach() of the (h, c) tuple between batches), nn.NLLLoss, model.zero_grad(), loss.backward(), torch.nn.utils.clip_grad_norm_, the manual update `p.data.add_(p.grad, alpha=-lr)`, evaluate() under model.eval() and torch.no_grad(), learning-rate annealing, saving/reloading the best model; module-level script as the original.
# Adapted to run offline in a few seconds: a tiny built-in corpus (a few sentences written for this file, split into train/valid/test) instead of Wikitext-2 files; emsize/nhid 32 instead of 200, bptt 8 instead of 35, batch size 4 instead of 20, 2 epochs instead of 40; the best model is saved to a temporary directory as a state_dict; CPU only; fixed seed; the Transformer variant of model.py is left out.
import argparse
import math
import os
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# --- data.py ---------------------------------------------------------------

TEXT = {
    'train': """the cat sat on the mat and the dog sat on the rug
the dog ran to the park and the cat ran to the house
a bird sang in the tree while the cat slept on the mat
the sun rose over the hill and the bird flew to the tree
the dog and the cat played in the park until the sun set
a child read a book in the house while the dog slept""",
    'valid': """the bird sat on the hill and the dog ran to the tree
the cat read a book while the sun set over the park""",
    'test': """a dog slept in the house and a cat sang on the rug
the child ran over the hill to the park""",
}


class Dictionary(object):
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus(object):
    def __init__(self, texts):
        self.dictionary = Dictionary()
        self.train = self.tokenize(texts['train'])
        self.valid = self.tokenize(texts['valid'])
        self.test = self.tokenize(texts['test'])

    def tokenize(self, text):
        """Turn text into a 1-D tensor of word ids, one <eos> per line."""
        idss = []
        for line in text.splitlines():
            words = line.split() + ['<eos>']
            ids = [self.dictionary.add_word(word) for word in words]
            idss.append(torch.tensor(ids).type(torch.int64))
        return torch.cat(idss)


# --- model.py --------------------------------------------------------------

class RNNModel(nn.Module):
    """Encoder, recurrent module, decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ['LSTM', 'GRU']:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            nonlinearity = {'RNN_TANH': 'tanh', 'RNN_RELU': 'relu'}[rnn_type]
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

        # Sharing the embedding matrix with the output layer needs equal sizes.
        if tie_weights:
            if nhid != ninp:
                raise ValueError('When using the tied flag, nhid must be equal to emsize')
            self.decoder.weight = self.encoder.weight

        self.init_weights()

        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == 'LSTM':
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


# --- main.py ---------------------------------------------------------------

parser = argparse.ArgumentParser(description='RNN/LSTM language model on a tiny built-in corpus')
parser.add_argument('--model', type=str, default='LSTM',
                    help='type of network (RNN_TANH, RNN_RELU, LSTM, GRU)')
parser.add_argument('--emsize', type=int, default=32, help='size of word embeddings')
parser.add_argument('--nhid', type=int, default=32, help='number of hidden units per layer')
parser.add_argument('--nlayers', type=int, default=2, help='number of layers')
parser.add_argument('--lr', type=float, default=20, help='initial learning rate')
parser.add_argument('--clip', type=float, default=0.25, help='gradient clipping')
parser.add_argument('--epochs', type=int, default=2, help='upper epoch limit')
parser.add_argument('--batch_size', type=int, default=4, metavar='N', help='batch size')
parser.add_argument('--bptt', type=int, default=8, help='sequence length')
parser.add_argument('--dropout', type=float, default=0.2,
                    help='dropout applied to layers (0 = no dropout)')
parser.add_argument('--tied', action='store_true',
                    help='tie the word embedding and softmax weights')
parser.add_argument('--seed', type=int, default=1111, help='random seed')
parser.add_argument('--log-interval', type=int, default=2, metavar='N', help='report interval')
args = parser.parse_args()

torch.manual_seed(args.seed)
device = torch.device("cpu")

corpus = Corpus(TEXT)

# Cut the token stream into bsz columns; each column is processed
# independently, so dependencies across column boundaries are not learned.


def batchify(data, bsz):
    # How many whole rows fit.
    nbatch = data.size(0) // bsz
    # Drop the leftover tokens.
    data = data.narrow(0, 0, nbatch * bsz)
    # One column per sequence.
    data = data.view(bsz, -1).t().contiguous()
    return data.to(device)


eval_batch_size = 2
train_data = batchify(corpus.train, args.batch_size)
val_data = batchify(corpus.valid, eval_batch_size)
test_data = batchify(corpus.test, eval_batch_size)

ntokens = len(corpus.dictionary)
model = RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied).to(device)

criterion = nn.NLLLoss()


def repackage_hidden(h):
    """Cut the hidden state loose from the history it was computed with."""

    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


# Take bptt rows starting at row i; the target is the same window shifted by
# one token, flattened to match the decoder output.


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i+seq_len]
    target = source[i+1:i+1+seq_len].view(-1)
    return data, target


def evaluate(data_source):
    # Dropout off.
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train():
    # Dropout on.
    model.train()
    total_loss = 0.
    start_time = time.time()
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        # Without this, backward would reach back to the very first batch.
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        # Clipping keeps the RNN's gradients from exploding.
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)

        total_loss += loss.item()

        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            elapsed = time.time() - start_time
            print('| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | loss {:5.2f} | ppl {:8.2f}'.format(
                epoch, batch, len(train_data) // args.bptt, lr, cur_loss, math.exp(cur_loss)))
            total_loss = 0
            start_time = time.time()


lr = args.lr
best_val_loss = None

with tempfile.TemporaryDirectory() as save_dir:
    save_path = os.path.join(save_dir, 'model.pt')
    for epoch in range(1, args.epochs+1):
        epoch_start_time = time.time()
        train()
        val_loss = evaluate(val_data)
        print('-' * 60)
        print('| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}'.format(
            epoch, val_loss, math.exp(val_loss)))
        print('-' * 60)
        # Keep the best model so far.
        if not best_val_loss or val_loss < best_val_loss:
            torch.save(model.state_dict(), save_path)
            best_val_loss = val_loss
        else:
            # No improvement on validation data: anneal the learning rate.
            lr /= 4.0

    # Reload the best model.
    model.load_state_dict(torch.load(save_path))
    # Make the LSTM weights contiguous again after loading.
    model.rnn.flatten_parameters()

test_loss = evaluate(test_data)
print('=' * 60)
print('| End of training | test loss {:5.2f} | test ppl {:8.2f}'.format(
    test_loss, math.exp(test_loss)))
print('=' * 60)
