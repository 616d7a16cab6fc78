"""Time-series prediction with two stacked LSTMCells trained by L-BFGS: sine waves with random
phase shifts, the model unrolled over each sequence and then fed its own outputs to predict
the future, the loss computed inside a closure that optimizer.step calls as often as it
needs. Run `python lstm_lbfgs.py` or `chainrule run lstm_lbfgs.py`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def make_waves(n, length, period, seed):
    rng = np.random.RandomState(seed)
    x = np.empty((n, length), np.int64)
    x[:] = np.arange(length) + rng.randint(-4 * period, 4 * period, n).reshape(n, 1)
    return np.sin(x / 1.0 / period).astype("float64")


class Sequence(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.hidden = hidden
        self.lstm1 = nn.LSTMCell(1, hidden)
        self.lstm2 = nn.LSTMCell(hidden, hidden)
        self.linear = nn.Linear(hidden, 1)

    def forward(self, input, future=0):
        outputs = []
        n = input.size(0)
        h_t = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t = torch.zeros(n, self.hidden, dtype=torch.double)
        h_t2 = torch.zeros(n, self.hidden, dtype=torch.double)
        c_t2 = torch.zeros(n, self.hidden, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3, help="steps to run")
    parser.add_argument("--length", type=int, default=40)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--max-iter", type=int, default=5)
    parser.add_argument("--future", type=int, default=20)
    opt = parser.parse_args()
    np.random.seed(0)
    torch.manual_seed(0)
    data = make_waves(24, opt.length, period=5, seed=2)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])

    seq = Sequence(opt.hidden)
    seq.double()
    for p in seq.parameters():  # the same start in every library
        p.data = torch.from_numpy(np.random.uniform(-0.25, 0.25, size=tuple(p.shape)))
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=opt.max_iter)
    evaluations = 0
    for i in range(opt.steps):
        print("STEP: ", i)

        def closure():
            global evaluations
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print(f"step {evaluations} loss {loss.item():.10f}")
            evaluations += 1
            loss.backward()
            return loss

        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = opt.future
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print(f"test loss {loss.item():.10f}")
            y = pred.detach().numpy()
    print(f"predicted {y.shape[1]} points, {opt.future} beyond the data")
