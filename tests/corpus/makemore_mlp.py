# Follows the shape of: Andrej Karpathy, "Neural Networks: Zero to Hero" — makemore part 2 (MLP after Bengio et al. 2003) — https://github.com/karpathy/nn-zero-to-hero (lectures/makemore/makemore_part2_mlp.ipynb)
# What it exercises: notebook-style module-level code: build_dataset with a sliding context window, train/dev/test split with random.shuffle, parameters C, W1, b1, W2, b2 from torch.randn(generator=g) then `for p in parameters: p.requires_grad = True`, the embedding lookup emb = C[Xtr[ix]] on a random minibatch, emb.view(-1, 30) @ W1 + b1, torch.tanh, F.cross_entropy, `p.grad = None`, loss.backward(), `p.data += -lr * p.grad` with a step-decayed lr, loss.log10().item() logging, evaluation of the full train/dev sets, and sampling with a context list.
# Adapted to run offline in a few seconds: a list of 58 common first names written into this file instead of names.txt (32k names); hidden layer 100 instead of 200; 300 steps instead of 200000 (lr decay at step 200 instead of 100000); 5 samples instead of 20; the lecture's seeded generator g for the parameters and samples, plus torch.manual_seed(42) for the minibatch indices (torch.randint without a generator is unseeded in the lecture).
import random

import torch
import torch.nn.functional as F

words = """emma olivia ava isabella sophia mia amelia harper evelyn abigail emily ella
elizabeth camila luna sofia avery mila aria scarlett penelope layla chloe victoria
madison eleanor grace nora riley zoey hannah hazel lily ellie violet lillian zoe
stella aurora natalie emilia everly leah aubrey willow addison lucy audrey bella
nova brooklyn paisley savannah claire skylar isla genesis naomi""".split()
print(len(words))

# vocabulary and the two lookups
chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
print(vocab_size)

block_size = 3  # characters of context for each prediction


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + '.':
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]  # slide the window

    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


random.seed(42)
torch.manual_seed(42)
random.shuffle(words)
n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))

Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])

g = torch.Generator().manual_seed(2147483647)  # reproducible
C = torch.randn((vocab_size, 10), generator=g)
W1 = torch.randn((30, 100), generator=g)
b1 = torch.randn(100, generator=g)
W2 = torch.randn((100, vocab_size), generator=g)
b2 = torch.randn(vocab_size, generator=g)
parameters = [C, W1, b1, W2, b2]

print(sum(p.nelement() for p in parameters))  # number of parameters in total

for p in parameters:
    p.requires_grad = True

lossi = []
stepi = []

for i in range(300):

    # minibatch
    ix = torch.randint(0, Xtr.shape[0], (32,))

    # forward pass
    emb = C[Xtr[ix]]  # (32, 3, 10)
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)  # (32, 100)
    logits = h @ W2 + b2  # (32, vocab_size)
    loss = F.cross_entropy(logits, Ytr[ix])

    # backward pass
    for p in parameters:
        p.grad = None
    loss.backward()

    # update
    lr = 0.1 if i < 200 else 0.01
    for p in parameters:
        p.data += -lr * p.grad

    # track stats
    stepi.append(i)
    lossi.append(loss.log10().item())

print(loss.item())
print(sum(lossi[-20:]) / 20)

emb = C[Xtr]  # (N, 3, 10)
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, Ytr)
print('train', loss.item())

emb = C[Xdev]
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, Ydev)
print('dev', loss.item())

# sample from the model
g = torch.Generator().manual_seed(2147483647 + 10)

for _ in range(5):

    out = []
    context = [0] * block_size  # start with all '.'
    while True:
        emb = C[torch.tensor([context])]  # (1, block_size, d)
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break

    print(''.join(itos[i] for i in out))
