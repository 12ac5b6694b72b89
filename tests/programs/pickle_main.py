import io
import os

import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)


buffer = io.BytesIO()
torch.save(Net(), buffer)
print("saved", buffer.getbuffer().nbytes > 0, os.path.isabs(__file__))
