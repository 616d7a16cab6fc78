"""A convolutional denoising autoencoder on scikit-learn's digits: strided Conv2d layers down to
a small feature map, ConvTranspose2d and nn.Upsample back up, noise added to the inputs from a
seeded NumPy generator, BCE loss against the clean image, RMSprop with ReduceLROnPlateau, and
the model moved with .to(device) and saved under a name built from the epoch. Run
`python conv_autoencoder.py` or `chainrule run conv_autoencoder.py`."""

import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits


class ConvAutoencoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(1, 8, 3, stride=2, padding=1),  # 8x8 -> 4x4
            nn.ReLU(),
            nn.Conv2d(8, 16, 3, stride=2, padding=1),  # 4x4 -> 2x2
            nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.ConvTranspose2d(16, 8, 2, stride=2),  # 2x2 -> 4x4
            nn.ReLU(),
            nn.Upsample(scale_factor=2, mode="nearest"),  # 4x4 -> 8x8
            nn.Conv2d(8, 1, 3, padding=1),
        )

    def forward(self, x):
        return self.decoder(self.encoder(x))  # logits; sigmoid in the loss


def main():
    parser = argparse.ArgumentParser(description="convolutional denoising autoencoder")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--noise", type=float, default=0.3)
    parser.add_argument("--save-dir", default="checkpoints")
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.set_default_dtype(torch.float64)

    images = load_digits().images[: args.n, None] / 16.0
    clean = torch.from_numpy(images)
    rng = np.random.RandomState(4)
    model = ConvAutoencoder().to(device)
    with torch.no_grad():
        for name, param in model.named_parameters():
            fan_in = param[0].numel() if param.dim() > 1 else 1
            scale = np.sqrt(1.0 / fan_in) if "weight" in name else 0.0
            param.copy_(torch.from_numpy(rng.uniform(-scale, scale, tuple(param.shape))))
    optimizer = torch.optim.RMSprop(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, "min", patience=0)
    os.makedirs(args.save_dir, exist_ok=True)

    step = 0
    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0.0
        for i in range(0, args.n, args.batch_size):
            target = clean[i : i + args.batch_size].to(device)
            noise = torch.from_numpy(rng.normal(0, args.noise, tuple(target.shape)))
            noisy = torch.clamp(target + noise, 0.0, 1.0)
            optimizer.zero_grad()
            loss = F.binary_cross_entropy_with_logits(model(noisy), target)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * len(target)
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
        epoch_loss /= args.n
        scheduler.step(epoch_loss)
        print(f"Epoch {epoch + 1}/{args.epochs}, loss {epoch_loss:.4f}, "
              f"lr {optimizer.param_groups[0]['lr']:.1e}")  # fmt: skip
        torch.save(model.state_dict(), os.path.join(args.save_dir, f"cae_epoch{epoch + 1}.pt"))

    model.load_state_dict(torch.load(os.path.join(args.save_dir, f"cae_epoch{args.epochs}.pt")))
    model.eval()
    with torch.no_grad():
        recon = torch.sigmoid(model(clean))
        mse = F.mse_loss(recon, clean).item()
    print(f"reconstruction mse {mse:.10f}")


if __name__ == "__main__":
    main()
