# Follows the shape of: "Learning PyTorch with Examples" (Justin Johnson), first edition — "PyTorch: Tensors and autograd" two-layer network — https://github.com/jcjohnson/pytorch-examples (autograd/two_layer_net_autograd.py; also pytorch/tutorials beginner_source/examples_autograd/two_layer_net_autograd.py)
# What it exercises: numpy-like module-level code, weights as leaf tensors with requires_grad=True, x.mm(w1).clamp(min=0).mm(w2), loss.backward(), manual SGD update inside torch.no_grad() with in-place w1 -= ..., and w1.grad.zero_() after each step.
# Adapted to run offline in a few seconds: N, D_in, H, D_out = 16, 64, 32, 5 instead of 64, 1000, 100, 10; 60 iterations instead of 500 (printing every 10); learning rate raised to 1e-5 to suit the smaller sizes; CPU only; fixed seed.
import torch

dtype = torch.float
device = torch.device("cpu")
# device = torch.device("cuda:0")  # uncomment to run on a GPU

torch.manual_seed(0)

# N is batch size; D_in is input dimension;
# H is hidden dimension; D_out is output dimension.
N, D_in, H, D_out = 16, 64, 32, 5

# Random input and output data; these do not need gradients.
x = torch.randn(N, D_in, device=device, dtype=dtype)
y = torch.randn(N, D_out, device=device, dtype=dtype)

# Random weights; we want d(loss)/d(weight), so they require grad.
w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

learning_rate = 1e-5
for t in range(60):
    # Forward pass: no hand-written backward, so intermediate values need not be kept.
    y_pred = x.mm(w1).clamp(min=0).mm(w2)

    # Squared error summed over everything; loss is a 0-d tensor.
    loss = (y_pred - y).pow(2).sum()
    if t % 10 == 9:
        print(t, loss.item())

    # Autograd fills w1.grad and w2.grad.
    loss.backward()

    # The update itself must not be recorded.
    with torch.no_grad():
        w1 -= learning_rate * w1.grad
        w2 -= learning_rate * w2.grad

        # Reset the accumulated gradients before the next pass.
        w1.grad.zero_()
        w2.grad.zero_()
