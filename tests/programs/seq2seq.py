"""Sequence-to-sequence translation with attention on a toy task (reverse a string of letters):
a GRU encoder, a GRU decoder with additive (Bahdanau) attention over the encoder's outputs,
teacher forcing chosen per batch with Python's random module, greedy decoding at test time,
and the encoder and decoder checkpointed together. Run `python seq2seq.py` or
`chainrule run seq2seq.py`."""

import argparse
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim

SOS_token, EOS_token = 0, 1
LETTERS = "abcdefgh"


def make_pairs(n, min_len, max_len, rng):
    pairs = []
    for _ in range(n):
        length = rng.randint(min_len, max_len + 1)
        word = "".join(rng.choice(list(LETTERS), length))
        pairs.append((word, word[::-1]))
    return pairs


def tensor_from_word(word, max_len):
    ids = [LETTERS.index(c) + 2 for c in word] + [EOS_token]
    return ids + [EOS_token] * (max_len + 1 - len(ids))


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)

    def forward(self, input):
        output, hidden = self.gru(self.embedding(input))
        return output, hidden


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
        scores = scores.squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights, keys)
        return context, weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, max_len):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.max_len = max_len

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.size(0)
        decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(self.max_len + 1):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs
            )
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze(-1).detach()  # its own prediction as next input
        decoder_outputs = F.log_softmax(torch.cat(decoder_outputs, dim=1), dim=-1)
        return decoder_outputs, decoder_hidden, torch.cat(attentions, dim=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input)
        query = hidden.permute(1, 0, 2)
        context, attn_weights = self.attention(query, encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, attn_weights


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n-pairs", type=int, default=256)
    parser.add_argument("--max-len", type=int, default=6)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-3)
    parser.add_argument("--teacher-forcing", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.set_default_dtype(torch.float64)

    rng = np.random.RandomState(args.seed)
    pairs = make_pairs(args.n_pairs, 3, args.max_len, rng)
    src = torch.tensor([tensor_from_word(a, args.max_len) for a, _ in pairs])
    tgt = torch.tensor([tensor_from_word(b, args.max_len) for _, b in pairs])
    n_test = args.n_pairs // 8
    vocab = len(LETTERS) + 2

    encoder = EncoderRNN(vocab, args.hidden)
    decoder = AttnDecoderRNN(args.hidden, vocab, args.max_len)
    with torch.no_grad():
        for module in (encoder, decoder):
            for p in module.parameters():
                p.copy_(torch.from_numpy(rng.normal(0.0, 0.15, size=tuple(p.shape))))
    encoder_optimizer = optim.Adam(encoder.parameters(), lr=args.lr)
    decoder_optimizer = optim.Adam(decoder.parameters(), lr=args.lr)
    criterion = nn.NLLLoss()

    step = 0
    for epoch in range(1, args.epochs + 1):
        encoder.train()
        decoder.train()
        for start in range(n_test, args.n_pairs, args.batch_size):
            input_tensor = src[start : start + args.batch_size]
            target_tensor = tgt[start : start + args.batch_size]
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            use_teacher_forcing = random.random() < args.teacher_forcing
            decoder_outputs, _, _ = decoder(
                encoder_outputs, encoder_hidden, target_tensor if use_teacher_forcing else None
            )
            loss = criterion(
                decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1)
            )
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            print(f"step {step} loss {loss.item():.10f}")
            step += 1

    torch.save({"encoder": encoder.state_dict(), "decoder": decoder.state_dict(),
                "epoch": args.epochs}, "seq2seq.pt")  # fmt: skip
    checkpoint = torch.load("seq2seq.pt")
    encoder.load_state_dict(checkpoint["encoder"])
    decoder.load_state_dict(checkpoint["decoder"])

    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(src[:n_test])
        decoder_outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
        test_loss = criterion(decoder_outputs.view(-1, vocab), tgt[:n_test].view(-1))
        decoded = decoder_outputs.argmax(-1)
    correct = (decoded == tgt[:n_test]).all(dim=1).sum().item()
    print(f"attention {tuple(attentions.shape)}; {correct}/{n_test} reversed exactly")
    print(f"test loss {test_loss.item():.10f}")


if __name__ == "__main__":
    main()
