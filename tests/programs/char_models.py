"""Character-level language models on a short text, one architecture per --model flag: an MLP
over a fixed context, a vanilla nn.RNN, an nn.GRU, an nn.LSTM, and a small causal transformer
(nn.TransformerEncoder with a square subsequent mask). Weights are drawn with NumPy so that any
library running this file starts from the same point. Run `python char_models.py --model lstm`
or `chainrule run char_models.py --model lstm`."""

import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

TEXT = """the quick brown fox jumps over the lazy dog. a stitch in time saves nine.
all that glitters is not gold. where there is smoke there is fire. actions speak louder than
words. the early bird catches the worm. better late than never. practice makes perfect.
"""


class CharMLP(nn.Module):
    """Bengio-style: embed the last `context` characters, concatenate, two linear layers."""

    def __init__(self, vocab_size, n_embd, n_hidden, context):
        super().__init__()
        self.context = context
        self.embed = nn.Embedding(vocab_size, n_embd)
        self.hidden = nn.Linear(context * n_embd, n_hidden)
        self.out = nn.Linear(n_hidden, vocab_size)

    def forward(self, x):
        # x: (batch, time); predict every position from the `context` characters before it
        b, t = x.shape
        padded = F.pad(x, (self.context - 1, 0), value=0)
        windows = padded.unfold(1, self.context, 1)  # (b, t, context)
        e = self.embed(windows).view(b, t, -1)
        return self.out(torch.tanh(self.hidden(e)))


class CharRNN(nn.Module):
    def __init__(self, cell, vocab_size, n_embd, n_hidden, n_layers=1):
        super().__init__()
        rnn_cls = {"rnn": nn.RNN, "gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.embed = nn.Embedding(vocab_size, n_embd)
        self.rnn = rnn_cls(n_embd, n_hidden, num_layers=n_layers, batch_first=True)
        self.head = nn.Linear(n_hidden, vocab_size)

    def forward(self, x, hidden=None):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.head(out)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=512):
        super().__init__()
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return x + self.pe[: x.size(1)]


class CharTransformer(nn.Module):
    def __init__(self, vocab_size, d_model, nhead, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab_size)
        self.d_model = d_model

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        h = self.pos(self.embed(x) * math.sqrt(self.d_model))
        return self.head(self.encoder(h, mask=mask, is_causal=True))


def build(kind, vocab_size):
    if kind == "mlp":
        return CharMLP(vocab_size, n_embd=10, n_hidden=64, context=4)
    if kind == "transformer":
        return CharTransformer(vocab_size, d_model=32, nhead=4, n_layers=2)
    return CharRNN(kind, vocab_size, n_embd=16, n_hidden=48)


def init_from_numpy(model, seed):
    """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for every weight and bias outside LayerNorm."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                continue
            fan_in = p.shape[-1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / math.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape))))


@torch.no_grad()
def evaluate(model, data, seq_len):
    model.eval()
    n = (len(data) - 1) // seq_len * seq_len
    x = data[:n].view(-1, seq_len)
    y = data[1 : n + 1].view(-1, seq_len)
    logits = model(x)
    model.train()
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()


def main():
    parser = argparse.ArgumentParser(description="char-level language models")
    parser.add_argument("--model", default="lstm", choices=["mlp", "rnn", "gru", "lstm",
                                                            "transformer"])  # fmt: skip
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seq-len", type=int, default=24)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.set_default_dtype(torch.float64)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    split = int(0.85 * len(data))
    train_data, val_data = data[:split], data[split:]

    model = build(args.model, len(chars))
    init_from_numpy(model, args.seed)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"model {args.model} with {n_params} parameters")
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    rng = np.random.RandomState(args.seed + 1)
    model.train()
    t0 = time.time()
    for step in range(args.steps):
        ix = rng.randint(0, len(train_data) - args.seq_len - 1, size=args.batch_size)
        x = torch.stack([train_data[i : i + args.seq_len] for i in ix])
        y = torch.stack([train_data[i + 1 : i + args.seq_len + 1] for i in ix])
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")
    elapsed = time.time() - t0

    print(f"val loss {evaluate(model, val_data, args.seq_len):.10f}")
    print(f"trained in {elapsed:.1f}s")

    # greedy decoding from a prompt
    model.eval()
    idx = torch.tensor([[stoi[c] for c in "the "]])
    with torch.no_grad():
        for _ in range(20):
            logits = model(idx)
            nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
            idx = torch.cat([idx, nxt], dim=1)
    text = "".join(itos[i] for i in idx[0].tolist())
    print(f"sample {len(text)} characters")


if __name__ == "__main__":
    main()
