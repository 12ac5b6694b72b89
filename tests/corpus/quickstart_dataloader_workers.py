# Follows the shape of: PyTorch "Learn the Basics" — "Quickstart" (with the DataLoader options from "Datasets & DataLoaders") — https://pytorch.org/tutorials/beginner/basics/quickstart_tutorial.html (pytorch/tutorials: beginner_source/basics/quickstart_tutorial.py)
# What it exercises: DataLoader(shuffle=True, num_workers=2) over a TensorDataset (forked worker processes feeding the training loop), a NeuralNetwork module (Flatten + Sequential Linear/ReLU stack), train(dataloader, model, loss_fn, optimizer) with model.train(), loss.backward(), optimizer.step(), optimizer.zero_grad() and f-string progress, test() with model.eval() and torch.no_grad() counting (pred.argmax(1) == y), an epoch loop, saving/loading the state_dict and predicting one sample; module-level script as the original.
# Adapted to run offline in a few seconds: random 28x28 "images" and labels in a TensorDataset instead of the FashionMNIST download; 256 training and 128 test samples instead of 60000/10000; 2 epochs instead of 5; progress every 2 batches instead of every 100; num_workers=2 added (the quickstart uses the default 0); the model file goes to a temporary directory; the worker processes get a fixed generator; CPU only.
import os
import tempfile

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

# Stand-ins for datasets.FashionMNIST(..., transform=ToTensor()).
training_data = TensorDataset(torch.rand(256, 1, 28, 28), torch.randint(0, 10, (256,)))
test_data = TensorDataset(torch.rand(128, 1, 28, 28), torch.randint(0, 10, (128,)))

batch_size = 64

# The data loaders
train_dataloader = DataLoader(training_data, batch_size=batch_size, shuffle=True,
                              num_workers=2, generator=torch.Generator().manual_seed(0))
test_dataloader = DataLoader(test_data, batch_size=batch_size, num_workers=2)

for X, y in test_dataloader:
    print(f"Shape of X [N, C, H, W]: {X.shape}")
    print(f"Shape of y: {y.shape} {y.dtype}")
    break

# Use an accelerator if there is one
device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")


# The model
class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 512),
            nn.ReLU(),
            nn.Linear(512, 512),
            nn.ReLU(),
            nn.Linear(512, 10)
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        # prediction error
        pred = model(X)
        loss = loss_fn(pred, y)

        # backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 2 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


epochs = 2
for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train(train_dataloader, model, loss_fn, optimizer)
    test(test_dataloader, model, loss_fn)
print("Done!")

with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "model.pth")
    torch.save(model.state_dict(), path)
    print("Saved PyTorch Model State to model.pth")

    model = NeuralNetwork().to(device)
    model.load_state_dict(torch.load(path, weights_only=True))

classes = [
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
]

model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
