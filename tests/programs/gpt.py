"""A small GPT written for PyTorch: token and position embeddings, pre-norm blocks with causal
self-attention (scaled_dot_product_attention, or masked softmax with --manual-attention), an
MLP with GELU, weight tying, scaled init through apply and named_parameters, AdamW with
decay and no-decay groups, gradient clipping and generate. Run it with `python gpt.py`
(PyTorch) or `chainrule run gpt.py`."""

import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

TEXT = (
    "first citizen: before we proceed any further, hear me speak. all: speak, speak. "
    "first citizen: you are all resolved rather to die than to famish? all: resolved. "
    "first citizen: first, you know caius marcius is chief enemy to the people. "
) * 4


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout, manual):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head, self.n_embd, self.dropout, self.manual = n_head, n_embd, dropout, manual
        mask = torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size)
        self.register_buffer("bias", mask, persistent=False)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.manual:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = att @ v
        else:
            p = self.dropout if self.training else 0.0
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=p, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, dropout, manual):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, dropout, manual)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.ModuleDict(dict(
            c_fc=nn.Linear(n_embd, 4 * n_embd), c_proj=nn.Linear(4 * n_embd, n_embd),
            act=nn.GELU(), dropout=nn.Dropout(dropout),
        ))  # fmt: skip

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        m = self.mlp
        return x + m.dropout(m.c_proj(m.act(m.c_fc(self.ln_2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout, manual):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            drop=nn.Dropout(dropout),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, dropout, manual)
                             for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))  # fmt: skip
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        params = {name: p for name, p in self.named_parameters() if p.requires_grad}
        decay = [p for p in params.values() if p.dim() >= 2]
        no_decay = [p for p in params.values() if p.dim() < 2]
        groups = [
            {"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0},
        ]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, generator=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size :]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx_next = torch.multinomial(probs, num_samples=1, generator=generator)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--manual-attention", action="store_true")
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--compile-step", action="store_true", help="torch.compile the step")
    args = parser.parse_args()

    torch.set_default_dtype(torch.float64)
    torch.manual_seed(1337)
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    block_size, batch_size = 16, 8
    model = GPT(len(chars), block_size, n_layer=2, n_head=2, n_embd=32, dropout=args.dropout,
                manual=args.manual_attention)  # fmt: skip
    n_params = sum(p.numel() for p in model.parameters())
    # The same starting weights in every library: the init above drew each library's own
    # random numbers, so the matrices are drawn again by NumPy (biases and norms are 0 and 1).
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape))) * 0.02)
    optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    if args.compile:
        model = torch.compile(model)

    last_start = len(data) - block_size - 1
    starts = np.random.default_rng(1).integers(0, last_start, (args.steps, batch_size))
    model.train()

    def train_step(x, y):
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        return loss.item()

    if args.compile_step:
        train_step = torch.compile(train_step)

    for step in range(args.steps):
        ix = torch.from_numpy(starts[step])
        x = torch.stack([data[i : i + block_size] for i in ix])
        y = torch.stack([data[i + 1 : i + 1 + block_size] for i in ix])
        loss = train_step(x, y)
        print(f"step {step} loss {loss:.10f}")

    model.eval()
    out = model.generate(torch.zeros((1, 1), dtype=torch.long), 20, top_k=5,
                         generator=torch.Generator().manual_seed(0))  # fmt: skip
    print(f"generated {out.shape[1] - 1} tokens; parameters {n_params}")


if __name__ == "__main__":
    main()
