"""A variational autoencoder on binarised scikit-learn digits written with torch.distributions:
the encoder gives a diagonal Normal posterior, a latent is drawn with rsample (the
reparameterisation trick), the decoder gives Bernoulli logits, and the loss is the negative
ELBO with kl_divergence against a standard Normal prior. The training step is one function
under @torch.compile (a no-op unless `--compile` is given). Run `python vae.py` or
`chainrule run vae.py`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.distributions import Bernoulli, Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, x_dim=64, h_dim=64, z_dim=4):
        super().__init__()
        self.fc1 = nn.Linear(x_dim, h_dim)
        self.fc_mu = nn.Linear(h_dim, z_dim)
        self.fc_logvar = nn.Linear(h_dim, z_dim)
        self.fc3 = nn.Linear(z_dim, h_dim)
        self.fc4 = nn.Linear(h_dim, x_dim)
        self.z_dim = z_dim

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc_mu(h), self.fc_logvar(h)

    def decode(self, z):
        return self.fc4(F.relu(self.fc3(z)))  # Bernoulli logits

    def forward(self, x):
        mu, logvar = self.encode(x)
        q = Normal(mu, torch.exp(0.5 * logvar))
        z = q.rsample()
        return self.decode(z), q


def loss_function(logits, x, q):
    prior = Normal(torch.zeros_like(q.loc), torch.ones_like(q.scale))
    recon = -Bernoulli(logits=logits).log_prob(x).sum(dim=1)
    kl = kl_divergence(q, prior).sum(dim=1)
    return (recon + kl).mean(), recon.mean(), kl.mean()


def main():
    parser = argparse.ArgumentParser(description="VAE on digits")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--n", type=int, default=768)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compile", action="store_true", help="torch.compile the training step")
    args = parser.parse_args()
    torch.manual_seed(args.seed)

    x = (load_digits().data[: args.n] > 7).astype(np.float32)
    train_loader = DataLoader(TensorDataset(torch.from_numpy(x)), batch_size=args.batch_size,
                              shuffle=True)  # fmt: skip
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    @torch.compile(disable=not args.compile)
    def train_step(data):
        optimizer.zero_grad()
        logits, q = model(data)
        loss, recon, kl = loss_function(logits, data, q)
        loss.backward()
        optimizer.step()
        return loss, recon, kl

    step = 0
    for epoch in range(1, args.epochs + 1):
        model.train()
        train_loss = 0.0
        for (data,) in train_loader:
            loss, recon, kl = train_step(data)
            train_loss += loss.item() * len(data)
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
        print(f"====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}"
              f" (recon {recon:.2f}, kl {kl:.2f})")  # fmt: skip

    model.eval()
    with torch.no_grad():
        logits, q = model(torch.from_numpy(x))
        loss, _, _ = loss_function(logits, torch.from_numpy(x), q)
        sample = torch.sigmoid(model.decode(torch.randn(16, model.z_dim))).view(16, 8, 8)
    print(f"sampled {tuple(sample.shape)}")
    print(f"final loss {loss.item():.10f}")


if __name__ == "__main__":
    main()
