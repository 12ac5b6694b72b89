# Follows the shape of: timm (PyTorch Image Models) model weight EMA — ModelEmaV2/ModelEmaV3 — https://github.com/huggingface/pytorch-image-models (timm/utils/model_ema.py) — used in a plain training loop as timm's train.py does
# What it exercises: an nn.Module wrapper holding copy.deepcopy(model) in eval() mode, methods decorated with @torch.no_grad() that walk state_dict() values (parameters and BatchNorm buffers) and update them in place with lerp_/copy_/mul_+add_, a floating-point check on buffers (num_batches_tracked is an integer and is copied), calling ema.update(model) after every optimizer.step(), a @torch.no_grad() predict() method, evaluating model and EMA copy in eval() (BatchNorm uses running statistics), and showing that the EMA copy's parameters still have requires_grad=True (deepcopy keeps the flag) yet never get a .grad.
# Adapted to run offline in a few seconds: a small Conv-BN-ReLU-Linear classifier on random 1x12x12 images in 3 classes instead of an ImageNet model; 12 steps of batch 16; decay 0.9 so the EMA moves visibly in a few steps; warm-up and device options left out; fixed seed.
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ModelEma(nn.Module):
    """Exponential moving average of a model's weights and buffers."""

    def __init__(self, model, decay=0.9999):
        super().__init__()
        # a detached copy; it is never trained directly
        self.module = deepcopy(model)
        self.module.eval()
        self.decay = decay

    @torch.no_grad()
    def _update(self, model, update_fn):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(update_fn(ema_v, model_v))

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            if ema_v.is_floating_point():
                ema_v.lerp_(model_v, weight=1. - self.decay)
            else:
                ema_v.copy_(model_v)

    @torch.no_grad()
    def set(self, model):
        self._update(model, update_fn=lambda e, m: m)

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


class SmallNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 6, 3, padding=1)
        self.bn = nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 6 * 6, num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(torch.flatten(x, 1))

    @torch.no_grad()
    def predict(self, x):
        return self.forward(x).argmax(dim=1)


images = torch.randn(64, 1, 12, 12)
labels = torch.randint(0, 3, (64,))
images[labels == 1] += 0.5
images[labels == 2] -= 0.5

model = SmallNet()
model_ema = ModelEma(model, decay=0.9)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

for step in range(12):
    idx = torch.randint(0, 64, (16,))
    model.train()
    output = model(images[idx])
    loss = F.cross_entropy(output, labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model_ema.update(model)
    if step % 4 == 3:
        print(f"step {step}: loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    acc = (model(images).argmax(1) == labels).float().mean().item()
    acc_ema = (model_ema(images).argmax(1) == labels).float().mean().item()
print(f"accuracy model {acc:.3f}  ema {acc_ema:.3f}")

pred = model.predict(images[:5])
print("predict():", pred.tolist(), "requires_grad:", pred.requires_grad)
print("ema params need grad:", any(p.requires_grad for p in model_ema.parameters()),
      "| ema grads:", [p.grad for p in model_ema.parameters()][:2])
print("ema BN running_mean differs from model:",
      not torch.allclose(model_ema.module.bn.running_mean, model.bn.running_mean))
print("num_batches_tracked:", model.bn.num_batches_tracked.item(), model_ema.module.bn.num_batches_tracked.item())

model_ema.set(model)
print("after set(): same weights", torch.equal(model_ema.module.fc.weight, model.fc.weight))
