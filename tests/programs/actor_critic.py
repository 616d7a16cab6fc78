"""Advantage actor-critic on a small grid world written in this file: one network with an
action head (a Categorical over four moves) and a value head, episodes run to the goal or a
step limit, the policy loss weighted by the advantage, the value loss a smooth L1 against the
discounted return. Run `python actor_critic.py` or `chainrule run actor_critic.py`."""

import argparse
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

SavedAction = namedtuple("SavedAction", ["log_prob", "value"])
MOVES = [(-1, 0), (1, 0), (0, -1), (0, 1)]  # up, down, left, right


class GridWorld:
    """An n x n grid; start in the top-left corner, reach the bottom-right one. Walls at the
    edges; -0.04 a step, +1 at the goal; the state is the one-hot of the cell."""

    def __init__(self, n=4, max_steps=40):
        self.n, self.max_steps = n, max_steps

    def reset(self):
        self.pos, self.t = (0, 0), 0
        return self.observe()

    def observe(self):
        s = np.zeros(self.n * self.n, dtype=np.float32)
        s[self.pos[0] * self.n + self.pos[1]] = 1.0
        return s

    def step(self, action):
        dr, dc = MOVES[action]
        r = min(max(self.pos[0] + dr, 0), self.n - 1)
        c = min(max(self.pos[1] + dc, 0), self.n - 1)
        self.pos, self.t = (r, c), self.t + 1
        at_goal = self.pos == (self.n - 1, self.n - 1)
        reward = 1.0 if at_goal else -0.04
        return self.observe(), reward, at_goal or self.t >= self.max_steps


class Policy(nn.Module):
    """Implements both actor and critic in one model."""

    def __init__(self, n_states, hidden):
        super().__init__()
        self.affine1 = nn.Linear(n_states, hidden)
        self.action_head = nn.Linear(hidden, 4)
        self.value_head = nn.Linear(hidden, 1)
        self.saved_actions = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        action_prob = F.softmax(self.action_head(x), dim=-1)
        state_values = self.value_head(x)
        return action_prob, state_values


def select_action(model, state):
    state = torch.from_numpy(state).float()
    probs, state_value = model(state)
    m = Categorical(probs)
    action = m.sample()
    model.saved_actions.append(SavedAction(m.log_prob(action), state_value))
    return action.item()


def finish_episode(model, optimizer, gamma):
    R = 0
    saved_actions = model.saved_actions
    policy_losses, value_losses, returns = [], [], []
    for r in model.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    for (log_prob, value), R in zip(saved_actions, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
        value_losses.append(F.smooth_l1_loss(value, torch.tensor([R])))
    optimizer.zero_grad()
    loss = torch.stack(policy_losses).sum() + torch.stack(value_losses).sum()
    loss.backward()
    optimizer.step()
    del model.rewards[:]
    del model.saved_actions[:]
    return loss.item()


def main():
    parser = argparse.ArgumentParser(description="actor-critic on a grid world")
    parser.add_argument("--gamma", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=543)
    parser.add_argument("--episodes", type=int, default=60)
    parser.add_argument("--size", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-2)
    parser.add_argument("--log-interval", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    env = GridWorld(args.size)
    model = Policy(args.size * args.size, args.hidden)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)

    lengths = []
    for i_episode in range(args.episodes):
        state = env.reset()
        ep_reward = 0.0
        for t in range(1, env.max_steps + 1):
            action = select_action(model, state)
            state, reward, done = env.step(action)
            model.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        lengths.append(t)
        loss = finish_episode(model, optimizer, args.gamma)
        print(f"step {i_episode} loss {loss:.10f}")
        if i_episode % args.log_interval == 0:
            print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\tsteps {t}")
    first, last = np.mean(lengths[:10]), np.mean(lengths[-10:])
    print(f"episode length {first:.1f} -> {last:.1f} (shortest {2 * (args.size - 1)})")
    print(f"final length {last:.4f}")


if __name__ == "__main__":
    main()
