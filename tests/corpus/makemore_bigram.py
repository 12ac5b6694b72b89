# Follows the shape of: Andrej Karpathy, "Neural Networks: Zero to Hero" — makemore part 1 (bigrams: counting, then a one-layer neural net trained by gradient descent) — https://github.com/karpathy/nn-zero-to-hero (lectures/makemore/makemore_part1_bigrams.ipynb)
# What it exercises: notebook-style module-level code: a count matrix N filled with in-place `N[ix1, ix2] += 1`, P = (N+1).float() normalised in place with `P /= P.sum(1, keepdims=True)`, sampling with torch.multinomial and a torch.Generator, the negative log likelihood, then the neural version: F.one_hot(...).float() @ W with W = torch.randn(..., generator=g, requires_grad=True), softmax written out (exp, sum with keepdims, divide), loss = -probs[torch.arange(num), ys].log().mean() + 0.01*(W**2).mean(), `W.grad = None`, loss.backward(), `W.data += -50 * W.grad`, and sampling from the trained net.
# Adapted to run offline in a few seconds: a list of 58 common first names written into this file instead of names.txt (32k names); 30 gradient steps instead of 100 (200 in the lecture's exercise); 5 samples; fixed generator seed as in the lecture.
import torch
import torch.nn.functional as F

words = """emma olivia ava isabella sophia mia amelia harper evelyn abigail emily ella
elizabeth camila luna sofia avery mila aria scarlett penelope layla chloe victoria
madison eleanor grace nora riley zoey hannah hazel lily ellie violet lillian zoe
stella aurora natalie emilia everly leah aubrey willow addison lucy audrey bella
nova brooklyn paisley savannah claire skylar isla genesis naomi""".split()
print(len(words), words[:8])

chars = sorted(list(set(''.join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi['.'] = 0
itos = {i: s for s, i in stoi.items()}
num_chars = len(stoi)

# --- counting -------------------------------------------------------------
N = torch.zeros((num_chars, num_chars), dtype=torch.int32)
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1

P = (N + 1).float()
P /= P.sum(1, keepdims=True)

g = torch.Generator().manual_seed(2147483647)
for i in range(3):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print(''.join(out))

log_likelihood = 0.0
n = 0
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        prob = P[stoi[ch1], stoi[ch2]]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
nll = -log_likelihood
print(f'{nll=}')
print(f'{nll/n}')

# --- the neural network version ---------------------------------------------
# training set of bigrams (x, y)
xs, ys = [], []
for w in words:
    chs = ['.'] + list(w) + ['.']
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        xs.append(ix1)
        ys.append(ix2)
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print('number of examples: ', num)

# one neuron per output character
g = torch.Generator().manual_seed(2147483647)
W = torch.randn((num_chars, num_chars), generator=g, requires_grad=True)

# gradient descent
for k in range(30):

    # forward pass
    xenc = F.one_hot(xs, num_classes=num_chars).float()  # one-hot inputs
    logits = xenc @ W  # log-counts
    counts = logits.exp()  # like the rows of N
    probs = counts / counts.sum(1, keepdims=True)  # next-character probabilities
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
    if k % 10 == 0 or k == 29:
        print(k, loss.item())

    # backward pass
    W.grad = None  # zero the gradient
    loss.backward()

    # update
    W.data += -50 * W.grad

# sample from the neural net model
g = torch.Generator().manual_seed(2147483647)

for i in range(5):

    out = []
    ix = 0
    while True:
        xenc = F.one_hot(torch.tensor([ix]), num_classes=num_chars).float()
        logits = xenc @ W  # predict log-counts
        counts = logits.exp()
        p = counts / counts.sum(1, keepdims=True)

        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print(''.join(out))
