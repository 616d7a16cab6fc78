"""A small ResNet on synthetic images (oriented stripes of four angles plus noise): BasicBlocks
with two 3x3 convolutions, BatchNorm2d and an identity or 1x1-convolution shortcut, global
average pooling, SGD with momentum, Nesterov and weight decay, a CosineAnnealingLR schedule,
kaiming_normal_-style initialisation (drawn with NumPy here so every library starts alike),
and the best checkpoint kept with its epoch and accuracy; `--compile` puts the network under
torch.compile. Run `python resnet.py` or `chainrule run resnet.py`."""

import argparse
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def make_stripes(n, size, rng):
    """Images of stripes at 0, 45, 90 or 135 degrees with a random phase, and their class."""
    labels = rng.randint(0, 4, n)
    angles = labels * np.pi / 4
    yy, xx = np.mgrid[0:size, 0:size]
    phase = rng.uniform(0, 2 * np.pi, n)
    proj = np.cos(angles)[:, None, None] * xx + np.sin(angles)[:, None, None] * yy
    images = np.sin(proj * 1.2 + phase[:, None, None]) + 0.8 * rng.randn(n, size, size)
    return images[:, None].astype(np.float64), labels.astype(np.int64)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super(BasicBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1,
                               bias=False)  # fmt: skip
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != self.expansion * planes:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride,
                          bias=False),
                nn.BatchNorm2d(self.expansion * planes),
            )  # fmt: skip

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += self.shortcut(x)
        out = F.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, block, num_blocks, num_classes=4, width=8):
        super(ResNet, self).__init__()
        self.in_planes = width
        self.conv1 = nn.Conv2d(1, width, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.layer1 = self._make_layer(block, width, num_blocks[0], stride=1)
        self.layer2 = self._make_layer(block, 2 * width, num_blocks[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.linear = nn.Linear(2 * width * block.expansion, num_classes)

    def _make_layer(self, block, planes, num_blocks, stride):
        strides = [stride] + [1] * (num_blocks - 1)
        layers = []
        for stride in strides:
            layers.append(block(self.in_planes, planes, stride))
            self.in_planes = planes * block.expansion
        return nn.Sequential(*layers)

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer2(self.layer1(out))
        out = torch.flatten(self.avgpool(out), 1)
        return self.linear(out)


def init_weights(model, rng):
    for m in model.modules():
        if isinstance(m, nn.Conv2d):  # kaiming normal, fan_out, relu
            fan_out = m.out_channels * m.kernel_size[0] * m.kernel_size[1]
            std = np.sqrt(2.0 / fan_out)
            m.weight.data.copy_(torch.from_numpy(rng.normal(0, std, tuple(m.weight.shape))))
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.constant_(m.weight, 1)
            nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.Linear):
            bound = 1 / np.sqrt(m.in_features)
            m.weight.data.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(m.weight.shape))))
            nn.init.zeros_(m.bias)


def main():
    parser = argparse.ArgumentParser(description="ResNet on synthetic stripes")
    parser.add_argument("--lr", default=0.05, type=float, help="learning rate")
    parser.add_argument("--epochs", default=2, type=int)
    parser.add_argument("--n-train", default=256, type=int)
    parser.add_argument("--size", default=12, type=int)
    parser.add_argument("--batch-size", default=32, type=int)
    parser.add_argument("--resume", "-r", action="store_true", help="resume from checkpoint")
    parser.add_argument("--compile", action="store_true", help="torch.compile the network")
    args = parser.parse_args()
    torch.set_default_dtype(torch.float64)

    rng = np.random.RandomState(0)
    x_train, y_train = make_stripes(args.n_train, args.size, rng)
    x_test, y_test = make_stripes(128, args.size, rng)
    x_train, y_train = torch.from_numpy(x_train), torch.from_numpy(y_train)
    x_test, y_test = torch.from_numpy(x_test), torch.from_numpy(y_test)

    net = ResNet(BasicBlock, [1, 1])
    init_weights(net, rng)
    best_acc, start_epoch = 0, 0
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4,
                          nesterov=True)  # fmt: skip
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    if args.resume:
        checkpoint = torch.load("./checkpoint/ckpt.pth")
        net.load_state_dict(checkpoint["net"])
        best_acc, start_epoch = checkpoint["acc"], checkpoint["epoch"] + 1
    if args.compile:
        net = torch.compile(net)

    step = 0
    for epoch in range(start_epoch, start_epoch + args.epochs):
        net.train()
        train_loss, correct, total = 0, 0, 0
        for batch_idx in range(0, args.n_train, args.batch_size):
            inputs = x_train[batch_idx : batch_idx + args.batch_size]
            targets = y_train[batch_idx : batch_idx + args.batch_size]
            optimizer.zero_grad()
            outputs = net(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            train_loss += loss.item()
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
            print(f"step {step} loss {loss.item():.10f}")
            step += 1
        print(f"epoch {epoch} | Loss: {train_loss / (batch_idx + 1):.3f} | "
              f"Acc: {100.0 * correct / total:.3f}% ({correct}/{total})")  # fmt: skip

        net.eval()
        with torch.no_grad():
            outputs = net(x_test)
            test_loss = criterion(outputs, y_test).item()
            acc = 100.0 * outputs.argmax(1).eq(y_test).sum().item() / len(y_test)
        print(f"test loss {test_loss:.10f}")
        if acc > best_acc:
            print("Saving..")
            state = {"net": net.state_dict(), "acc": acc, "epoch": epoch}
            os.makedirs("checkpoint", exist_ok=True)
            torch.save(state, "./checkpoint/ckpt.pth")
            best_acc = acc
        scheduler.step()
    print(f"best accuracy {best_acc:.2f}")


if __name__ == "__main__":
    main()
