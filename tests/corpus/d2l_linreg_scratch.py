# Follows the shape of: Dive into Deep Learning (d2l.ai), "Linear Regression Implementation from Scratch", PyTorch tab (first edition style with a data_iter generator) — https://d2l.ai/chapter_linear-regression/linear-regression-scratch.html (d2l-ai/d2l-en: chapter_linear-networks/linear-regression-scratch.md)
# What it exercises: synthetic_data with torch.normal and matmul, a data_iter generator that shuffles indices with random.shuffle and yields minibatches, leaves w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True) and b = torch.zeros(1, requires_grad=True), linreg/squared_loss/sgd as plain functions, `l.sum().backward()`, sgd updating `param -= lr * param.grad / batch_size` then `param.grad.zero_()` inside torch.no_grad(), a per-epoch evaluation under torch.no_grad(), and the error of the learned w and b.
# Adapted to run offline in a few seconds: 200 examples instead of 1000 (batch size 10 kept, so 20 minibatches per epoch); 3 epochs as the original; no d2l package (the plot of the data is left out); random and torch seeds fixed.
import random

import torch


def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = torch.normal(0, 1, (num_examples, len(w)))
    y = torch.matmul(X, w) + b
    y += torch.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


random.seed(0)
torch.manual_seed(0)

true_w = torch.tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 200)
print('features:', features[0], '\nlabel:', labels[0])


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    # visit the examples in a random order
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = torch.tensor(
            indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


batch_size = 10

for X, y in data_iter(batch_size, features, labels):
    print(X, '\n', y)
    break

w = torch.normal(0, 0.01, size=(2, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)


def linreg(X, w, b):
    """The linear regression model."""
    return torch.matmul(X, w) + b


def squared_loss(y_hat, y):
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


lr = 0.03
num_epochs = 3
net = linreg
loss = squared_loss

for epoch in range(num_epochs):
    for X, y in data_iter(batch_size, features, labels):
        l = loss(net(X, w, b), y)  # minibatch loss of X and y
        # l has shape (batch_size, 1): sum it to get a scalar to differentiate
        l.sum().backward()
        sgd([w, b], lr, batch_size)  # update the parameters with their gradients
    with torch.no_grad():
        train_l = loss(net(features, w, b), labels)
        print(f'epoch {epoch + 1}, loss {float(train_l.mean()):f}')

print(f'error in estimating w: {true_w - w.reshape(true_w.shape)}')
print(f'error in estimating b: {true_b - b}')
