# Follows the shape of: Priya Goyal's "Trading compute for memory in PyTorch models using Checkpointing" tutorial — https://github.com/prigoyal/pytorch_memonger (tutorial/Checkpointing_for_PyTorch_models.ipynb) — updated to the current torch.utils.checkpoint API (https://pytorch.org/docs/stable/checkpoint.html)
# What it exercises: checkpoint_sequential over a list of modules with an input that requires grad, comparing the output and every parameter's .grad with a plain (non-checkpointed) run; a DummyNet whose forward checkpoints one ConvBNReLU block through a `custom(module)` closure factory, with BatchNorm and ReLU(inplace=True) inside the recomputed segment (and its running statistics updated twice per step); checkpoint(use_reentrant=True) on inputs that do not require grad — the output does not require grad either and the parameters inside get no gradient — next to use_reentrant=False, which keeps them.
# Adapted to run offline in a few seconds: Linear sizes 20-10-6-3 instead of 100-50-20-5; DummyNet on a 2x3x8x8 input with 8/16 channels instead of 16/64; the RNN segment-checkpointing example of the notebook is left out; Variable(...) written as requires_grad_(); the notebook's self.assertEqual comparisons written as torch.equal prints; use_reentrant given explicitly as current torch asks; fixed seed.
import warnings
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.utils.checkpoint as checkpoint
from torch.utils.checkpoint import checkpoint_sequential

torch.manual_seed(0)

# --- checkpointing a sequential model ---------------------------------------------------
model = nn.Sequential(
    nn.Linear(20, 10),
    nn.ReLU(),
    nn.Linear(10, 6),
    nn.ReLU(),
    nn.Linear(6, 3),
    nn.ReLU()
)

input_var = torch.randn(1, 20).requires_grad_()

# split the model into this many segments
segments = 2

# the modules, in the order they run
modules = [module for k, module in model._modules.items()]

out = checkpoint_sequential(modules, segments, input_var, use_reentrant=False)

# backprop out.sum() instead of a real loss
model.zero_grad()
out.sum().backward()

# keep the results for the comparison below
output_checkpointed = out.data.clone()
grad_checkpointed = {}
for name, param in model.named_parameters():
    grad_checkpointed[name] = param.grad.data.clone()

# the same model, run normally
original = model

# a fresh leaf with the same values
x = input_var.detach().clone().requires_grad_()

out = original(x)
out_not_checkpointed = out.data.clone()

original.zero_grad()
out.sum().backward()
grad_not_checkpointed = {}
for name, param in model.named_parameters():
    grad_not_checkpointed[name] = param.grad.data.clone()

print("same output:", torch.equal(output_checkpointed, out_not_checkpointed))
for name in grad_checkpointed:
    print(name, "same grad:", torch.equal(grad_checkpointed[name], grad_not_checkpointed[name]))


# --- checkpointing one module of a bigger network ------------------------------------------
class ConvBNReLU(nn.Module):

    def __init__(self, in_planes, out_planes):
        super(ConvBNReLU, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, out_planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_planes)
        self.relu1 = nn.ReLU(inplace=True)

    def forward(self, x):
        out = self.relu1(self.bn1(self.conv1(x)))
        return out


class DummyNet(nn.Module):
    def __init__(self):
        super(DummyNet, self).__init__()
        self.features = nn.Sequential(OrderedDict([
            ('conv1', nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1, bias=False)),
            ('bn1', nn.BatchNorm2d(8)),
            ('relu1', nn.ReLU(inplace=True)),
        ]))

        # the block whose activations are recomputed in backward
        self.module = ConvBNReLU(8, 16)

        self.final_module = ConvBNReLU(16, 16)

    def custom(self, module):
        def custom_forward(*inputs):
            inputs = module(inputs[0])
            return inputs
        return custom_forward

    def forward(self, x):
        out = self.features(x)
        out = checkpoint.checkpoint(self.custom(self.module), out, use_reentrant=False)
        out = self.final_module(out)
        return out


net = DummyNet()
images = torch.randn(2, 3, 8, 8)
result = net(images)
print("batches seen by the checkpointed BN before backward:", net.module.bn1.num_batches_tracked.item())
result.mean().backward()
print("after backward (recomputed):", net.module.bn1.num_batches_tracked.item())
print("checkpointed conv got a grad:", net.module.conv1.weight.grad is not None)

# --- inputs that do not require grad ------------------------------------------------------
block = nn.Linear(4, 4)
plain = torch.randn(3, 4)  # no requires_grad
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = checkpoint.checkpoint(block, plain, use_reentrant=True)
print("reentrant: output requires grad:", out.requires_grad,
      "| warnings:", [str(w.message).split(".")[0] for w in caught])

out = checkpoint.checkpoint(block, plain, use_reentrant=False)
out.sum().backward()
print("non-reentrant: output requires grad:", out.requires_grad,
      "| block.weight.grad set:", block.weight.grad is not None)
