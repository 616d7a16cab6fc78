"""Text classification with nn.EmbeddingBag, in the shape of the news-topic tutorial: sentences
drawn from four topic vocabularies, a vocabulary built by counting tokens, a collate_fn that
concatenates token ids and computes offsets with cumsum, an EmbeddingBag (mean) and a linear
layer, SGD with gradient clipping and a StepLR schedule stepped when validation accuracy
stalls. Run `python text_classifier.py` or `chainrule run text_classifier.py`."""

import argparse
import time
from collections import Counter

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader

TOPICS = {
    "World": "government minister election border treaty president vote capital nation war",
    "Sports": "team match goal season coach player league score win championship",
    "Business": "market shares profit company bank investors stock growth trade deal",
    "Sci/Tec": "software computer internet research space phone data chip network robot",
}
COMMON = "the a of to in and on for with after new says over by"


def make_dataset(n, rng):
    labels = list(TOPICS)
    out = []
    for _ in range(n):
        label = rng.randint(len(labels))
        topic, common = TOPICS[labels[label]].split(), COMMON.split()
        words = [topic[rng.randint(len(topic))] if rng.rand() < 0.4 else
                 common[rng.randint(len(common))] for _ in range(rng.randint(4, 12))]  # fmt: skip
        out.append((label, " ".join(words)))
    return out


class TextClassificationModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, num_class):
        super(TextClassificationModel, self).__init__()
        self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
        self.fc = nn.Linear(embed_dim, num_class)

    def init_weights(self, rng):
        initrange = 0.5
        self.embedding.weight.data = torch.from_numpy(
            rng.uniform(-initrange, initrange, self.embedding.weight.shape).astype(np.float32)
        )
        self.fc.weight.data = torch.from_numpy(
            rng.uniform(-initrange, initrange, self.fc.weight.shape).astype(np.float32)
        )
        self.fc.bias.data.zero_()  # fmt: skip

    def forward(self, text, offsets):
        embedded = self.embedding(text, offsets)
        return self.fc(embedded)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--lr", type=float, default=5.0)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--emsize", type=int, default=16)
    args = parser.parse_args()

    rng = np.random.RandomState(0)
    train_iter, test_iter = make_dataset(480, rng), make_dataset(160, rng)
    counter = Counter(tok for _, line in train_iter for tok in line.split())
    vocab = {"<unk>": 0}
    for tok, _ in counter.most_common():
        vocab[tok] = len(vocab)

    def text_pipeline(x):
        return [vocab.get(tok, 0) for tok in x.split()]

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(_label)
            processed_text = torch.tensor(text_pipeline(_text), dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list, text_list, offsets

    model = TextClassificationModel(len(vocab), args.emsize, len(TOPICS))
    model.init_weights(rng)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    n_valid = len(train_iter) // 8
    train_split, valid_split = train_iter[n_valid:], train_iter[:n_valid]
    train_dataloader = DataLoader(train_split, batch_size=args.batch_size, shuffle=False,
                                  collate_fn=collate_batch)  # fmt: skip
    valid_dataloader = DataLoader(valid_split, batch_size=args.batch_size, collate_fn=collate_batch)
    test_dataloader = DataLoader(test_iter, batch_size=args.batch_size, collate_fn=collate_batch)

    def evaluate(dataloader):
        model.eval()
        total_acc, total_count = 0, 0
        with torch.no_grad():
            for label, text, offsets in dataloader:
                predicted_label = model(text, offsets)
                total_acc += (predicted_label.argmax(1) == label).sum().item()
                total_count += label.size(0)
        return total_acc / total_count

    total_accu = None
    step = 0
    for epoch in range(1, args.epochs + 1):
        epoch_start_time = time.time()
        model.train()
        for label, text, offsets in train_dataloader:
            optimizer.zero_grad()
            predicted_label = model(text, offsets)
            loss = criterion(predicted_label, label)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
            optimizer.step()
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
        accu_val = evaluate(valid_dataloader)
        if total_accu is not None and total_accu > accu_val:
            scheduler.step()
        else:
            total_accu = accu_val
        print("-" * 59)
        print(f"| end of epoch {epoch:3d} | time: {time.time() - epoch_start_time:5.2f}s | "
              f"valid accuracy {accu_val:8.3f} ")  # fmt: skip
        print("-" * 59)

    accu_test = evaluate(test_dataloader)
    print(f"test accuracy {accu_test:.4f}")


if __name__ == "__main__":
    main()
