"""A character-level language model on a list of names, written for PyTorch: an MLP over a
context window or a GRU built from nn.Linear, trained with AdamW on batches drawn with
replacement, evaluated under inference_mode, checkpointed, and sampled with topk and
multinomial. Run it with `python charlm.py` (PyTorch) or `chainrule run charlm.py`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, RandomSampler

NAMES = """emma olivia ava isabella sophia charlotte mia amelia harper evelyn abigail emily
elizabeth mila ella avery sofia camila aria scarlett victoria madison luna grace chloe penelope
layla riley zoey nora lily eleanor hannah lillian addison aubrey ellie stella natalie zoe leah
hazel violet aurora savannah audrey brooklyn bella claire skylar lucy paisley everly anna
caroline nova genesis emilia kennedy samantha maya willow kinsley naomi aaliyah elena sarah
ariana allison gabriella alice madelyn cora ruby eva serenity autumn adeline hailey gianna
valentina isla eliana quinn nevaeh ivy sadie piper lydia alexa josephine emery julia delilah
arianna vivian kaylee sophie brielle madeline liam noah william james oliver benjamin elijah
lucas mason logan alexander ethan jacob michael daniel henry jackson sebastian aiden matthew
samuel david joseph carter owen wyatt john jack luke jayden dylan grayson levi isaac gabriel
julian mateo anthony jaxon lincoln joshua christopher andrew theodore caleb ryan asher nathan
thomas leo isaiah charles josiah hudson christian hunter connor eli ezra aaron landon adrian
jonathan nolan jeremiah easton elias colton cameron carson robert angel maverick nicholas
dominic jaxson greyson adam ian austin santiago jordan cooper brayden roman evan ezekiel xavier
jose jace jameson leonardo bryson axel everett parker kayden miles sawyer jason"""
WORDS = NAMES.split()


class Names(Dataset):
    """(context, next character) pairs from every word, '.' marking both ends."""

    def __init__(self, words, block_size, stoi):
        xs, ys = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                xs.append(list(context))
                ys.append(stoi[ch])
                context = context[1:] + [stoi[ch]]
        self.x = torch.tensor(xs)
        self.y = torch.tensor(ys)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class MLP(nn.Module):
    def __init__(self, vocab, block_size, n_embd, n_hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, n_embd)
        self.net = nn.Sequential(
            nn.Linear(block_size * n_embd, n_hidden), nn.Tanh(), nn.Linear(n_hidden, vocab)
        )

    def forward(self, idx):
        return self.net(self.emb(idx).flatten(1))


class GRUCell(nn.Module):
    """A GRU cell made of nn.Linear layers, as the lectures write it."""

    def __init__(self, n_embd, n_hidden):
        super().__init__()
        self.xh_to_z = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_r = nn.Linear(n_embd + n_hidden, n_hidden)
        self.xh_to_hbar = nn.Linear(n_embd + n_hidden, n_hidden)

    def forward(self, xt, hprev):
        xh = torch.cat([xt, hprev], dim=1)
        r = torch.sigmoid(self.xh_to_r(xh))
        hbar = torch.tanh(self.xh_to_hbar(torch.cat([xt, r * hprev], dim=1)))
        z = torch.sigmoid(self.xh_to_z(xh))
        return (1 - z) * hprev + z * hbar


class RNN(nn.Module):
    def __init__(self, vocab, n_embd, n_hidden):
        super().__init__()
        self.start = nn.Parameter(torch.zeros(1, n_hidden))
        self.wte = nn.Embedding(vocab, n_embd)
        self.cell = GRUCell(n_embd, n_hidden)
        self.lm_head = nn.Linear(n_hidden, vocab)

    def forward(self, idx):
        b, t = idx.size()
        emb = self.wte(idx)
        h = self.start.expand((b, -1))
        for i in range(t):
            h = self.cell(emb[:, i, :], h)
        return self.lm_head(h)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["mlp", "rnn"], default="mlp")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--checkpoint", default=None)
    args = parser.parse_args()

    torch.set_default_dtype(torch.float64)
    torch.manual_seed(0)
    chars = sorted(set("".join(WORDS)))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}
    stoi["."] = 0
    itos = {i: ch for ch, i in stoi.items()}
    vocab, block_size = len(stoi), 3
    train = Names(WORDS[: int(0.9 * len(WORDS))], block_size, stoi)
    test = Names(WORDS[int(0.9 * len(WORDS)) :], block_size, stoi)

    if args.model == "mlp":
        model = MLP(vocab, block_size, n_embd=8, n_hidden=32)
    else:
        model = RNN(vocab, n_embd=8, n_hidden=24)
    # The same starting weights in every library: drawn by NumPy, copied in.
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)) * 0.2))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)

    # Batches: fixed index lists here (a RandomSampler's draws differ between libraries),
    # and the DataLoader with a RandomSampler(replacement=True) for the timing run below.
    batches = np.random.default_rng(1).integers(0, len(train), size=(args.steps, 32))
    for step in range(args.steps):
        xb, yb = train[torch.from_numpy(batches[step])]
        loss = F.cross_entropy(model(xb), yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        print(f"step {step} loss {loss.item():.10f}")

    loader = DataLoader(
        train, batch_size=32, sampler=RandomSampler(train, replacement=True, num_samples=128)
    )
    for xb, yb in loader:
        assert xb.shape[1] == block_size and yb.dtype == torch.long

    model.eval()
    with torch.inference_mode():
        test_loss = F.cross_entropy(model(test.x), test.y).item()
    print(f"test loss {test_loss:.10f}")

    if args.checkpoint:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "step": args.steps}, args.checkpoint)  # fmt: skip
        state = torch.load(args.checkpoint)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        print(f"resumed at step {state['step']}")

    g = torch.Generator().manual_seed(42)
    with torch.no_grad():
        idx = torch.zeros((1, block_size), dtype=torch.long)
        for _ in range(8):
            logits = model(idx[:, -block_size:])
            top = torch.topk(logits, 5, dim=-1)
            probs = F.softmax(top.values, dim=-1)
            pick = torch.multinomial(probs, num_samples=1, generator=g)
            nxt = torch.gather(top.indices, -1, pick)
            idx = torch.cat([idx, nxt], dim=1)
    sample = "".join(itos[i] for i in idx[0, block_size:].tolist())
    print(f"sample {len(sample)} characters")


if __name__ == "__main__":
    main()
