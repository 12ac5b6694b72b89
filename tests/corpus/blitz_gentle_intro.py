# Follows the shape of: PyTorch tutorial "A Gentle Introduction to torch.autograd" — https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html (pytorch/tutorials: beginner_source/blitz/autograd_tutorial.py)
# What it exercises: one training step of a model (forward, loss.sum().backward(), optimizer step), a polynomial Q of two leaves with Q.backward(gradient=external_grad) and checking a.grad against the analytic derivative, which results require grad ("exclusion from the DAG"), freezing a model with param.requires_grad = False and replacing its final layer.
# Adapted to run offline in a few seconds: a small ResNet-like network written here (stem, one residual block, avgpool, .fc) instead of torchvision's pretrained resnet18, a 1x3x32x32 random image and 10-class random labels instead of 1x3x64x64 and 1000 classes, no weights download, fixed seed.
import torch
from torch import nn


class TinyResNet(nn.Module):
    """Same outline as resnet18: conv stem, a residual block, pooling and a final .fc layer."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.block_conv1 = nn.Conv2d(8, 8, kernel_size=3, padding=1, bias=False)
        self.block_bn1 = nn.BatchNorm2d(8)
        self.block_conv2 = nn.Conv2d(8, 8, kernel_size=3, padding=1, bias=False)
        self.block_bn2 = nn.BatchNorm2d(8)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        identity = x
        out = self.relu(self.block_bn1(self.block_conv1(x)))
        out = self.block_bn2(self.block_conv2(out))
        out += identity
        out = self.relu(out)
        out = torch.flatten(self.avgpool(out), 1)
        return self.fc(out)


torch.manual_seed(0)

# --- Usage in PyTorch: one forward/backward/step on a random "image" -------
model = TinyResNet()
data = torch.rand(1, 3, 32, 32)
labels = torch.rand(1, 10)

prediction = model(data)  # forward pass

loss = (prediction - labels).sum()
loss.backward()  # backward pass

optim = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
optim.step()  # gradient descent
print("fc.weight.grad shape:", tuple(model.fc.weight.grad.shape))

# --- Differentiation in autograd ---------------------------------------------
a = torch.tensor([1.0, 4.0], requires_grad=True)
b = torch.tensor([5.0, 2.0], requires_grad=True)

Q = 2 * a**3 - 5 * b**2

external_grad = torch.tensor([1.0, 1.0])
Q.backward(gradient=external_grad)

# The gradients equal the analytic partial derivatives.
print(6 * a**2 == a.grad)
print(-10 * b == b.grad)

# --- Exclusion from the DAG --------------------------------------------------
x = torch.rand(4, 4)
y = torch.rand(4, 4)
z = torch.rand((4, 4), requires_grad=True)

c = x + y
print(f"Does `c` require gradients?: {c.requires_grad}")
d = x + z
print(f"Does `d` require gradients?: {d.requires_grad}")

# Freeze every parameter, then swap in a fresh classifier head: only the
# new layer's weight and bias will receive gradients.
model = TinyResNet()
for param in model.parameters():
    param.requires_grad = False

model.fc = nn.Linear(8, 5)

optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
out = model(data).sum()
out.backward()
print("conv1 grad:", model.conv1.weight.grad)
print("fc grad is set:", model.fc.weight.grad is not None)
