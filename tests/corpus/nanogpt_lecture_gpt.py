# Follows the shape of: Andrej Karpathy, "Let's build GPT: from scratch, in code, spelled out" (ng-video-lecture), the final character-level GPT — https://github.com/karpathy/ng-video-lecture (gpt.py); generate() decorated with @torch.no_grad() as in https://github.com/karpathy/nanoGPT (model.py)
# What it exercises: module-level hyperparameters and data prep (char vocabulary, encode/decode lambdas, 90/10 split), get_batch with torch.randint and torch.stack, @torch.no_grad() estimate_loss() switching model.eval()/model.train(), a decoder-only transformer (nn.Embedding for tokens and positions, Head with key/query/value Linear layers, a registered causal `tril` buffer and masked_fill(-inf), softmax, dropout, MultiHeadAttention with projection, FeedForward, Block with LayerNorm and residual additions, lm_head), F.cross_entropy on logits.view(B*T, C), AdamW, optimizer.zero_grad(set_to_none=True), loss.backward(), optimizer.step(), then sampling with torch.multinomial and torch.cat in generate().
# Adapted to run offline in a few seconds: a short English paragraph written for this file instead of input.txt (tiny Shakespeare); batch_size 4, block_size 8, n_embd 32, n_head 4, n_layer 2, dropout 0.1 instead of 64/256/384/6/6/0.2; 30 iterations instead of 5000 (eval every 10 over 4 batches instead of every 500 over 200); 40 generated characters instead of 500; CPU only.
import torch
import torch.nn as nn
from torch.nn import functional as F

# hyperparameters
batch_size = 4  # sequences per batch
block_size = 8  # longest context used for a prediction
max_iters = 30
eval_interval = 10
learning_rate = 1e-3
device = 'cuda' if torch.cuda.is_available() else 'cpu'
eval_iters = 4
n_embd = 32
n_head = 4
n_layer = 2
dropout = 0.1
# ------------

torch.manual_seed(1337)

text = """A river starts as rain on a hill. It runs down in small streams that meet
and grow, and by the time it reaches the plain it is wide and slow. Boats carry
grain and wood along it, and towns grow on its banks. In spring the water rises
and in late summer it falls, and the people who live beside it learn to read
its moods the way sailors read the sky."""

# every character that occurs in the text
chars = sorted(list(set(text)))
vocab_size = len(chars)
# map characters to integers and back
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # string -> list of ints
decode = lambda l: ''.join([itos[i] for i in l])  # list of ints -> string

# Train and validation splits
data = torch.tensor(encode(text), dtype=torch.long)
n = int(0.9 * len(data))  # the last 10% is for validation
train_data = data[:n]
val_data = data[n:]


# data loading
def get_batch(split):
    # inputs x and targets y (x shifted by one)
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
    x, y = x.to(device), y.to(device)
    return x, y


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ['train', 'val']:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


class Head(nn.Module):
    """ a single head of causal self-attention """

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        # x: (batch, time, channels); out: (batch, time, head size)
        B, T, C = x.shape
        k = self.key(x)  # (B,T,hs)
        q = self.query(x)  # (B,T,hs)
        # affinities between positions, scaled by 1/sqrt(head size)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # no looking ahead
        wei = F.softmax(wei, dim=-1)  # (B, T, T)
        wei = self.dropout(wei)
        # weighted sum of the values
        v = self.value(x)  # (B,T,hs)
        out = wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)
        return out


class MultiHeadAttention(nn.Module):
    """ several heads side by side """

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(head_size * num_heads, n_embd)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.dropout(self.proj(out))
        return out


class FeedForward(nn.Module):
    """ position-wise MLP """

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """ attention (tokens talk) then feed-forward (each token thinks) """

    def __init__(self, n_embd, n_head):
        # n_embd: embedding size, n_head: number of heads
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedForward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


class GPTLanguageModel(nn.Module):

    def __init__(self):
        super().__init__()
        # token embeddings and position embeddings
        self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
        self.position_embedding_table = nn.Embedding(block_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)  # last layer norm
        self.lm_head = nn.Linear(n_embd, vocab_size)

        # small normal init for linears and embeddings
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        B, T = idx.shape

        # idx and targets: (B,T) integer tensors
        tok_emb = self.token_embedding_table(idx)  # (B,T,C)
        pos_emb = self.position_embedding_table(torch.arange(T, device=device))  # (T,C)
        x = tok_emb + pos_emb  # (B,T,C)
        x = self.blocks(x)  # (B,T,C)
        x = self.ln_f(x)  # (B,T,C)
        logits = self.lm_head(x)  # (B,T,vocab_size)

        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            loss = F.cross_entropy(logits, targets)

        return logits, loss

    @torch.no_grad()
    def generate(self, idx, max_new_tokens):
        # idx: (B, T) indices of the context so far
        for _ in range(max_new_tokens):
            # only the last block_size tokens fit the position table
            idx_cond = idx[:, -block_size:]
            logits, loss = self(idx_cond)
            # keep the last time step
            logits = logits[:, -1, :]  # (B, C)
            probs = F.softmax(logits, dim=-1)  # (B, C)
            # draw the next token
            idx_next = torch.multinomial(probs, num_samples=1)  # (B, 1)
            # and append it
            idx = torch.cat((idx, idx_next), dim=1)  # (B, T+1)
        return idx


model = GPTLanguageModel()
m = model.to(device)
# parameter count
print(sum(p.numel() for p in m.parameters()) / 1e6, 'M parameters')

# the optimizer
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)

for iter in range(max_iters):

    # now and then, report the mean loss on both splits
    if iter % eval_interval == 0 or iter == max_iters - 1:
        losses = estimate_loss()
        print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")

    # a batch of training data
    xb, yb = get_batch('train')

    # one optimisation step
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()

# sample from the model
context = torch.zeros((1, 1), dtype=torch.long, device=device)
print(decode(m.generate(context, max_new_tokens=40)[0].tolist()))
