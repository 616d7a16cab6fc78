"""A graph attention network for node classification on a synthetic citation-style graph (a
stochastic block model whose node features carry a noisy hint of the class): multi-head
attention layers written by hand, either over a dense adjacency mask (masked_fill, softmax)
or over an edge list (index_select, exp, scatter_add_ and index_add_). Full-batch training
with Adam, weight decay, early stopping on the validation loss, the best weights kept in a
file. Run `python gat.py` or `chainrule run gat.py --sparse`."""

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(n_nodes, n_classes, n_features, seed):
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, n_classes, n_nodes)
    same = labels[:, None] == labels[None, :]
    prob = np.where(same, 0.12, 0.01)
    upper = np.triu(rng.rand(n_nodes, n_nodes) < prob, 1)
    adj = upper | upper.T | np.eye(n_nodes, dtype=bool)  # self-loops
    centers = rng.randn(n_classes, n_features)
    features = 0.6 * centers[labels] + rng.randn(n_nodes, n_features)
    return features, adj, labels


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, heads, dropout, alpha, concat):
        super().__init__()
        self.heads, self.out_features, self.concat, self.dropout = (
            heads, out_features, concat, dropout)  # fmt: skip
        self.W = nn.Parameter(torch.empty(size=(in_features, heads * out_features)))
        self.a_src = nn.Parameter(torch.empty(size=(heads, out_features)))
        self.a_dst = nn.Parameter(torch.empty(size=(heads, out_features)))
        self.leakyrelu = nn.LeakyReLU(alpha)

    def forward(self, h, adj=None, edges=None):
        n = h.size(0)
        Wh = (h @ self.W).view(n, self.heads, self.out_features)  # (n, heads, out)
        score_src = (Wh * self.a_src).sum(dim=-1)  # (n, heads)
        score_dst = (Wh * self.a_dst).sum(dim=-1)
        if edges is None:
            e = self.leakyrelu(score_dst.t().unsqueeze(2) + score_src.t().unsqueeze(1))
            e = e.masked_fill(~adj.unsqueeze(0), float("-inf"))  # (heads, n_dst, n_src)
            attention = F.softmax(e, dim=2)
            attention = F.dropout(attention, self.dropout, training=self.training)
            h_prime = torch.matmul(attention, Wh.transpose(0, 1)).transpose(0, 1)
        else:
            src, dst = edges
            e = self.leakyrelu(score_src.index_select(0, src) + score_dst.index_select(0, dst))
            e = torch.exp(e - e.max())  # softmax over each node's in-edges, by hand
            denom = torch.zeros(n, self.heads, dtype=e.dtype)
            denom.scatter_add_(0, dst.unsqueeze(1).expand(-1, self.heads), e)
            attention = e / denom.index_select(0, dst)
            attention = F.dropout(attention, self.dropout, training=self.training)
            messages = attention.unsqueeze(-1) * Wh.index_select(0, src)
            h_prime = torch.zeros_like(Wh).index_add_(0, dst, messages)
        if self.concat:
            return F.elu(h_prime.reshape(n, -1))
        return h_prime.mean(dim=1)


class GAT(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout, alpha, nheads):
        super().__init__()
        self.dropout = dropout
        self.attention = GraphAttentionLayer(nfeat, nhid, nheads, dropout, alpha, concat=True)
        self.out_att = GraphAttentionLayer(nhid * nheads, nclass, 1, dropout, alpha, concat=False)

    def forward(self, x, adj=None, edges=None):
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.attention(x, adj, edges)
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.out_att(x, adj, edges), dim=1)


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    return preds.eq(labels).double().sum() / len(labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=120)
    parser.add_argument("--classes", type=int, default=3)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--weight_decay", type=float, default=5e-4)
    parser.add_argument("--hidden", type=int, default=8)
    parser.add_argument("--nb_heads", type=int, default=4)
    parser.add_argument("--dropout", type=float, default=0.6)
    parser.add_argument("--alpha", type=float, default=0.2)
    parser.add_argument("--patience", type=int, default=10)
    parser.add_argument("--sparse", action="store_true", help="edge-list attention")
    parser.add_argument("--seed", type=int, default=72)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_default_dtype(torch.float64)
    features, adj, labels = make_graph(args.nodes, args.classes, args.features, args.seed)
    features = torch.from_numpy(features)
    labels = torch.from_numpy(labels).long()
    adj = torch.from_numpy(adj)
    edges = adj.nonzero().t()  # row 0: destination, row 1: source
    edges = (edges[1], edges[0])
    idx_train = torch.arange(0, args.nodes // 2)
    idx_val = torch.arange(args.nodes // 2, 3 * args.nodes // 4)
    idx_test = torch.arange(3 * args.nodes // 4, args.nodes)

    model = GAT(args.features, args.hidden, args.classes, args.dropout, args.alpha, args.nb_heads)
    rng = np.random.RandomState(args.seed)
    with torch.no_grad():
        for p in model.parameters():  # Glorot uniform with the gain of LeakyReLU
            bound = 1.414 * np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape))))
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    graph = {"edges": edges} if args.sparse else {"adj": adj}

    best, bad_counter, best_epoch = float("inf"), 0, 0
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        output = model(features, **graph)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        acc_train = accuracy(output[idx_train], labels[idx_train])
        loss_train.backward()
        optimizer.step()

        model.eval()
        with torch.no_grad():
            output = model(features, **graph)
            loss_val = F.nll_loss(output[idx_val], labels[idx_val])
        print(f"step {epoch} loss {loss_train.item():.10f}")
        print(
            f"Epoch: {epoch + 1:04d} loss_train: {loss_train.data.item():.4f} "
            f"acc_train: {acc_train.data.item():.4f} loss_val: {loss_val.data.item():.4f}"
        )
        if loss_val.item() < best:
            best, best_epoch, bad_counter = loss_val.item(), epoch, 0
            torch.save(model.state_dict(), "gat_best.pkl")
        else:
            bad_counter += 1
        if bad_counter == args.patience:
            break

    print(f"Loading {best_epoch}th epoch")
    model.load_state_dict(torch.load("gat_best.pkl"))
    model.eval()
    output = model(features, **graph)
    loss_test = F.nll_loss(output[idx_test], labels[idx_test])
    acc_test = accuracy(output[idx_test], labels[idx_test])
    print(f"Test set results: loss= {loss_test.item():.4f} accuracy= {acc_test.item():.4f}")
    print(f"test loss {loss_test.item():.10f}")


if __name__ == "__main__":
    main()
