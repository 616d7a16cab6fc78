"""An MNIST-style MLP on scikit-learn's digits, trained for a number of iterations rather than
epochs: batches come from an endless DataLoader (a RandomSampler drawing with replacement
int(1e10) times, wrapped in iter()), the learning rate follows a OneCycleLR schedule, metrics
go to TensorBoard, evaluation runs every few hundred steps under torch.no_grad(), and the
best model is written to and read back from a file object; `--compile` wraps the model in
torch.compile. Run `python digits_mlp.py` or `chainrule run digits_mlp.py`."""

import argparse
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import Dataset
from torch.utils.data.dataloader import DataLoader
from torch.utils.data.sampler import RandomSampler
from torch.utils.tensorboard import SummaryWriter


class DigitsDataset(Dataset):
    def __init__(self, split):
        digits = load_digits()
        n_test = 360
        sl = slice(None, -n_test) if split == "train" else slice(-n_test, None)
        self.x = torch.tensor(digits.data[sl], dtype=torch.float32) / 16.0
        self.y = torch.tensor(digits.target[sl], dtype=torch.long)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return self.x[idx], self.y[idx]


class MLP(nn.Module):
    def __init__(self, n_hidden=64, p_drop=0.1):
        super().__init__()
        self.fc1 = nn.Linear(64, n_hidden)
        self.fc2 = nn.Linear(n_hidden, n_hidden)
        self.fc3 = nn.Linear(n_hidden, 10)
        self.drop = nn.Dropout(p_drop)

    def forward(self, x, targets=None):
        x = self.drop(F.gelu(self.fc1(x)))
        x = self.drop(F.gelu(self.fc2(x)))
        logits = self.fc3(x)
        loss = None if targets is None else F.cross_entropy(logits, targets)
        return logits, loss


@torch.no_grad()
def evaluate(model, dataset, batch_size):
    model.eval()
    loader = DataLoader(dataset, batch_size=batch_size, num_workers=0)
    losses, correct = [], 0
    for x, y in loader:
        logits, loss = model(x, y)
        losses.append(loss.item())
        correct += (logits.argmax(-1) == y).sum().item()
    model.train()
    return torch.tensor(losses).mean().item(), correct / len(dataset)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="digits MLP")
    parser.add_argument("--max-steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-2)
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--work-dir", type=str, default="out")
    parser.add_argument("--seed", type=int, default=3407)
    parser.add_argument("--compile", action="store_true", help="use torch.compile on the model")
    args = parser.parse_args()
    print(vars(args))

    torch.manual_seed(args.seed)
    os.makedirs(args.work_dir, exist_ok=True)
    writer = SummaryWriter(log_dir=args.work_dir)
    train_dataset, test_dataset = DigitsDataset("train"), DigitsDataset("test")
    model = MLP()
    print(f"number of parameters: {sum(p.numel() for p in model.parameters())}")
    if args.compile:
        model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate,
                                  weight_decay=0.01, betas=(0.9, 0.99))  # fmt: skip
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.learning_rate,
                                                    total_steps=args.max_steps)  # fmt: skip
    batch_loader = iter(DataLoader(
        train_dataset,
        sampler=RandomSampler(train_dataset, replacement=True, num_samples=int(1e10)),
        shuffle=False,
        batch_size=args.batch_size,
        pin_memory=True,
        num_workers=0,
    ))  # fmt: skip

    best_loss = None
    step = 0
    while True:
        t0 = time.time()
        X, Y = next(batch_loader)
        logits, loss = model(X, Y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        scheduler.step()
        t1 = time.time()
        print(f"step {step} loss {loss.item():.10f}")
        if step % 50 == 0:
            print(f"step {step} | loss {loss:.4f} | lr {scheduler.get_last_lr()[0]:.2e} | "
                  f"step time {(t1 - t0) * 1000:.2f}ms")  # fmt: skip
        if step > 0 and step % args.eval_every == 0:
            train_loss, _ = evaluate(model, train_dataset, 256)
            test_loss, test_acc = evaluate(model, test_dataset, 256)
            writer.add_scalar("Loss/train", train_loss, step)
            writer.add_scalar("Loss/test", test_loss, step)
            writer.add_scalar("Accuracy/test", test_acc, step)
            writer.flush()
            print(f"step {step} train loss: {train_loss:.4f} test loss: {test_loss:.4f}")
            if best_loss is None or test_loss < best_loss:
                out_path = os.path.join(args.work_dir, "model.pt")
                print(f"test loss {test_loss:.4f} is the best so far, saving model to {out_path}")
                with open(out_path, "wb") as f:
                    torch.save(model.state_dict(), f)
                best_loss = test_loss
        step += 1
        if args.max_steps >= 0 and step >= args.max_steps:
            break

    with open(os.path.join(args.work_dir, "model.pt"), "rb") as f:
        model.load_state_dict(torch.load(f))
    test_loss, test_acc = evaluate(model, test_dataset, 256)
    writer.add_text("summary", f"best test loss {test_loss:.4f}")
    writer.close()
    print(f"test accuracy {test_acc:.4f}")
