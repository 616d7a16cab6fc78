"""A fully connected autoencoder on scikit-learn's digits: an encoder down to a small code, a
decoder back up through a Sigmoid, MSE reconstruction loss with Adam, losses logged to
TensorBoard with SummaryWriter, and a training checkpoint (epoch, model, optimizer, loss)
saved, loaded back and resumed from. Run `python autoencoder.py` or
`chainrule run autoencoder.py`."""

import argparse

import numpy as np
import torch
from sklearn.datasets import load_digits
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter


class AutoEncoder(nn.Module):
    def __init__(self, n_in=64, n_code=8):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(n_in, 32), nn.ReLU(True), nn.Linear(32, 16), nn.ReLU(True),
            nn.Linear(16, n_code),
        )  # fmt: skip
        self.decoder = nn.Sequential(
            nn.Linear(n_code, 16), nn.ReLU(True), nn.Linear(16, 32), nn.ReLU(True),
            nn.Linear(32, n_in), nn.Sigmoid(),
        )  # fmt: skip

    def forward(self, x):
        return self.decoder(self.encoder(x))


def run_epoch(model, loader, criterion, optimizer, writer, epoch, step):
    model.train()
    for (img,) in loader:
        output = model(img)
        loss = criterion(output, img)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        writer.add_scalar("loss/train", loss.item(), step)
        print(f"step {step} loss {loss.item():.10f}")
        step += 1
    print(f"epoch [{epoch + 1}], loss:{loss:.4f}")
    return step, loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--n", type=int, default=512, help="training images")
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--logdir", default="runs/autoencoder")
    parser.add_argument("--checkpoint", default="autoencoder.tar")
    args = parser.parse_args()

    x = load_digits().data[: args.n].astype(np.float32) / 16.0
    loader = DataLoader(TensorDataset(torch.from_numpy(x)), batch_size=args.batch_size)

    model = AutoEncoder()
    rng = np.random.RandomState(0)
    for m in model.modules():
        if isinstance(m, nn.Linear):
            bound = np.sqrt(6.0 / (m.in_features + m.out_features))  # Glorot uniform
            with torch.no_grad():
                m.weight.copy_(
                    torch.from_numpy(
                        rng.uniform(-bound, bound, (m.out_features, m.in_features)).astype("f")
                    )
                )
                m.bias.zero_()  # fmt: skip
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    writer = SummaryWriter(args.logdir)

    step = 0
    half = args.epochs // 2
    for epoch in range(half):
        step, loss = run_epoch(model, loader, criterion, optimizer, writer, epoch, step)
    torch.save({
        "epoch": half,
        "step": step,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": optimizer.state_dict(),
        "loss": loss,
    }, args.checkpoint)  # fmt: skip

    # resume from the checkpoint in a fresh model and optimizer
    model = AutoEncoder()
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    checkpoint = torch.load(args.checkpoint)
    model.load_state_dict(checkpoint["model_state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    start, step = checkpoint["epoch"], checkpoint["step"]
    print(f"resumed at epoch {start} (loss {checkpoint['loss'].item():.4f})")
    for epoch in range(start, args.epochs):
        step, loss = run_epoch(model, loader, criterion, optimizer, writer, epoch, step)

    model.eval()
    with torch.no_grad():
        recon = model(torch.from_numpy(x))
        mse = ((recon - torch.from_numpy(x)) ** 2).mean().item()
        codes = model.encoder(torch.from_numpy(x))
    writer.add_histogram("codes", codes, step)
    writer.add_scalar("loss/final", mse, step)
    writer.close()
    print(f"final mse {mse:.10f}")


if __name__ == "__main__":
    main()
