"""A word-level LSTM language model trained with truncated backpropagation through time: the
corpus is batchified into columns, the hidden state is carried across chunks and detached
between them, gradients are clipped with clip_grad_norm_, and plain SGD is written by hand
with p.data.add_. The learning rate is annealed when validation loss stops improving and the
best model is saved to a file object. Run `python word_lstm.py` or `chainrule run word_lstm.py`."""

import argparse
import math
import os
import time

import numpy as np
import torch
import torch.nn as nn

CORPUS = """
the cat sat on the mat . the dog sat on the log . a cat and a dog met on the road .
the road was long and the sun was hot . the dog ran to the river and the cat ran home .
at home the cat sat by the fire . the dog came back from the river wet and cold .
the cat looked at the dog . the dog looked at the cat . then they both sat by the fire .
in the morning the sun came up over the hills . the cat and the dog walked to the river .
the river was cold and the road was long . they sat on the log and looked at the hills .
"""


class Dictionary:
    def __init__(self):
        self.word2idx = {}
        self.idx2word = []

    def add_word(self, word):
        if word not in self.word2idx:
            self.idx2word.append(word)
            self.word2idx[word] = len(self.idx2word) - 1
        return self.word2idx[word]

    def __len__(self):
        return len(self.idx2word)


class Corpus:
    def __init__(self, text):
        self.dictionary = Dictionary()
        lines = [line for line in text.strip().split("\n") if line]
        n_val = max(1, len(lines) // 6)
        self.train = self.tokenize(lines[:-n_val])
        self.valid = self.tokenize(lines[-n_val:])

    def tokenize(self, lines):
        ids = []
        for line in lines:
            for word in line.split() + ["<eos>"]:
                ids.append(self.dictionary.add_word(word))
        return torch.LongTensor(ids)


class RNNModel(nn.Module):
    """Encoder, recurrent module, decoder; optionally the decoder shares the encoder's weights."""

    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout if nlayers > 1 else 0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self, rng):
        initrange = 0.1
        with torch.no_grad():
            for p in self.parameters():
                p.copy_(torch.from_numpy(rng.uniform(-initrange, initrange, tuple(p.shape))))
        nn.init.zeros_(self.decoder.bias)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return torch.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (
            weight.new_zeros(self.nlayers, bsz, self.nhid),
            weight.new_zeros(self.nlayers, bsz, self.nhid),
        )


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i, bptt):
    seq_len = min(bptt, len(source) - 1 - i)
    data = source[i : i + seq_len]
    target = source[i + 1 : i + 1 + seq_len].view(-1)
    return data, target


def evaluate(model, criterion, data_source, bptt, eval_batch_size):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i, bptt)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def main():
    parser = argparse.ArgumentParser(description="Word-level LSTM language model")
    parser.add_argument("--emsize", type=int, default=24)
    parser.add_argument("--nhid", type=int, default=24)
    parser.add_argument("--nlayers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5.0)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--bptt", type=int, default=8)
    parser.add_argument("--dropout", type=float, default=0.2)
    parser.add_argument("--tied", action="store_true")
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--log-interval", type=int, default=5)
    parser.add_argument("--save", type=str, default="model.pt")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_default_dtype(torch.float64)
    corpus = Corpus(CORPUS)
    train_data = batchify(corpus.train, args.batch_size)
    val_data = batchify(corpus.valid, 2)
    ntokens = len(corpus.dictionary)
    model = RNNModel(ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
    model.init_weights(np.random.RandomState(args.seed))
    criterion = nn.NLLLoss()

    lr = args.lr
    best_val_loss = None
    step = 0
    for epoch in range(1, args.epochs + 1):
        epoch_start_time = time.time()
        model.train()
        total_loss = 0.0
        hidden = model.init_hidden(args.batch_size)
        for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
            data, targets = get_batch(train_data, i, args.bptt)
            # Starting each batch, we detach the hidden state from how it was previously
            # produced; otherwise the model would backpropagate all the way to the start.
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            for p in model.parameters():
                p.data.add_(p.grad, alpha=-lr)
            total_loss += loss.item()
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
            if batch % args.log_interval == 0 and batch > 0:
                cur_loss = total_loss / args.log_interval
                print(f"| epoch {epoch:3d} | {batch:5d} batches | lr {lr:02.2f} | "
                      f"loss {cur_loss:5.2f} | ppl {math.exp(cur_loss):8.2f}")  # fmt: skip
                total_loss = 0.0
        val_loss = evaluate(model, criterion, val_data, args.bptt, 2)
        print(f"| end of epoch {epoch:3d} | time: {time.time() - epoch_start_time:5.2f}s "
              f"| valid loss {val_loss:5.2f} | valid ppl {math.exp(val_loss):8.2f}")  # fmt: skip
        print(f"epoch {epoch} val loss {val_loss:.10f}")
        if not best_val_loss or val_loss < best_val_loss:
            with open(args.save, "wb") as f:
                torch.save(model.state_dict(), f)
            best_val_loss = val_loss
        else:
            lr /= 4.0  # anneal the learning rate if no improvement was seen

    with open(args.save, "rb") as f:
        model.load_state_dict(torch.load(f))
    val_loss = evaluate(model, criterion, val_data, args.bptt, 2)
    print(f"best val loss {val_loss:.10f}")
    os.remove(args.save)


if __name__ == "__main__":
    main()
