"""A GAN on a two-dimensional mixture of eight Gaussians on a ring: a generator and a
discriminator MLP, each with its own Adam optimizer, BCEWithLogitsLoss with real and fake
labels, fake samples detached for the discriminator's step, both networks saved in one
checkpoint; `--compile` puts both networks under torch.compile. Run `python gan.py` or
`chainrule run gan.py`."""

import argparse
import math

import torch
import torch.nn as nn


def sample_ring(n, modes=8, radius=2.0, std=0.05):
    """Points from `modes` Gaussians placed evenly on a circle."""
    k = torch.randint(0, modes, (n,))
    angle = k.float() * (2 * math.pi / modes)
    centers = torch.stack([radius * torch.cos(angle), radius * torch.sin(angle)], dim=1)
    return centers + std * torch.randn(n, 2)


class Generator(nn.Module):
    def __init__(self, nz, nh):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, nh), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(nh, nh), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(nh, 2),
        )  # fmt: skip

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, nh):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(2, nh), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(nh, nh), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(nh, 1),
        )  # fmt: skip

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.normal_(m.weight, 0.0, 0.2)
        nn.init.constant_(m.bias, 0.0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iters", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--nz", type=int, default=4)
    parser.add_argument("--nh", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--beta1", type=float, default=0.5)
    parser.add_argument("--manualSeed", type=int, default=999)
    parser.add_argument("--outf", default=".")
    parser.add_argument("--compile", action="store_true", help="torch.compile both networks")
    args = parser.parse_args()
    torch.manual_seed(args.manualSeed)

    netG = Generator(args.nz, args.nh)
    netG.apply(weights_init)
    netD = Discriminator(args.nh)
    netD.apply(weights_init)
    criterion = nn.BCEWithLogitsLoss()
    real_label, fake_label = 1.0, 0.0
    optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    if args.compile:
        netG, netD = torch.compile(netG), torch.compile(netD)
    fixed_noise = torch.randn(256, args.nz)

    for i in range(args.iters):
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real = sample_ring(args.batch_size)
        label = torch.full((args.batch_size,), real_label)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        D_x = torch.sigmoid(netD(real)).mean().item()
        noise = torch.randn(args.batch_size, args.nz)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach())
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = torch.sigmoid(output).mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = torch.sigmoid(output).mean().item()
        optimizerG.step()

        print(f"step {i} loss {errG.item():.10f}")
        if i % 50 == 0:
            print(f"[{i}/{args.iters}] Loss_D: {errD.item():.4f} Loss_G: {errG.item():.4f} "
                  f"D(x): {D_x:.4f} D(G(z)): {D_G_z1:.4f} / {D_G_z2:.4f}")  # fmt: skip

    with torch.no_grad():
        samples = netG(fixed_noise)
    radius = samples.norm(dim=1)
    print(f"mean radius {radius.mean().item():.4f} (target 2.0)")
    torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, f"{args.outf}/gan.pth")
    state = torch.load(f"{args.outf}/gan.pth")
    netG.load_state_dict(state["netG"])
    print(f"final loss {errD.item():.10f}")


if __name__ == "__main__":
    main()
