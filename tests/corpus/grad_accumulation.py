# Follows the shape of: Thomas Wolf (Hugging Face), "Training Neural Nets on Larger Batches: Practical Tips for 1-GPU, Multi-GPU & Distributed setups" — the gradient-accumulation loop — https://medium.com/huggingface/training-larger-batches-practical-tips-on-1-gpu-multi-gpu-distributed-setups-ec88c3e51255 ; and the forum question it answers, "How to implement accumulated gradient?" https://discuss.pytorch.org/t/how-to-implement-accumulated-gradient/3822
# What it exercises: model.zero_grad() once before the loop, loss = loss / accumulation_steps, loss.backward() on every micro-batch, optimizer.step() and model.zero_grad() only when (i+1) % accumulation_steps == 0, a check that the accumulated gradient equals the full-batch gradient, and the learner's mistake: a loop that never calls zero_grad, so .grad keeps growing (its norm printed each step) and the updates overshoot.
# Adapted to run offline in a few seconds: a 10-16-1 MLP on 64 random regression samples in micro-batches of 8 (accumulation_steps = 4) instead of a language model on real data; 2 epochs; the buggy loop runs 6 steps; fixed seed.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

inputs_all = torch.randn(64, 10)
labels_all = inputs_all[:, :1] * 2.0 - inputs_all[:, 1:2] + 0.1 * torch.randn(64, 1)
training_set = DataLoader(TensorDataset(inputs_all, labels_all), batch_size=8)

model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
loss_function = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

accumulation_steps = 4

# --- first check: 4 scaled micro-batches give the gradient of one batch of 32 ---------------
model.zero_grad()
for i, (inputs, labels) in enumerate(training_set):
    if i == accumulation_steps:
        break
    predictions = model(inputs)
    loss = loss_function(predictions, labels) / accumulation_steps
    loss.backward()
accumulated = [p.grad.clone() for p in model.parameters()]

model.zero_grad()
loss_function(model(inputs_all[:32]), labels_all[:32]).backward()
print("accumulated == full batch:",
      all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(accumulated, model.parameters())))

# --- the training loop with accumulation ------------------------------------------------------
for epoch in range(2):
    model.zero_grad()                                   # reset gradients tensors
    for i, (inputs, labels) in enumerate(training_set):
        predictions = model(inputs)                     # forward pass
        loss = loss_function(predictions, labels)       # compute loss function
        loss = loss / accumulation_steps                # normalize our loss (if averaged)
        loss.backward()                                 # backward pass
        if (i + 1) % accumulation_steps == 0:           # wait for several backward steps
            optimizer.step()                            # now we can do an optimizer step
            model.zero_grad()                           # reset gradients tensors
            with torch.no_grad():
                full = loss_function(model(inputs_all), labels_all).item()
            print(f"epoch {epoch} micro-batch {i + 1}: optimizer step, full-data loss {full:.4f}")

# --- the mistake: no zero_grad at all -----------------------------------------------------------
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step, (inputs, labels) in enumerate(training_set):
    if step == 6:
        break
    loss = loss_function(model(inputs), labels)
    loss.backward()                                     # adds to last step's .grad
    optimizer.step()
    grad_norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    print(f"forgot zero_grad, step {step}: loss {loss.item():.4f}, grad norm {grad_norm.item():.4f}")
