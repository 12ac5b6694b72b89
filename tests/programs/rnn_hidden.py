import torch

torch.manual_seed(0)
cell = torch.nn.RNNCell(2, 3)
h = torch.zeros(1, 3)
for t in range(4):
    h = cell(torch.randn(1, 2), h)
    loss = h.sum()
    loss.backward(retain_graph=True)
    h = h.detach()
print([round(v, 4) for v in cell.weight_hh.grad.flatten().tolist()[:3]])
