"""REINFORCE on a cart-pole balancing task written in this file (no gym): a softmax policy
network, actions drawn from torch.distributions.Categorical, log-probabilities kept per
episode, discounted returns normalised, and the policy-gradient loss with an entropy bonus.
Run `python reinforce.py` or `chainrule run reinforce.py`."""

import argparse
import math
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical


class CartPole:
    """A pole hinged on a cart that moves on a track; push left (0) or right (1). The episode
    ends when the pole leans more than 12 degrees, the cart leaves the track, or time is up."""

    gravity, cart_mass, pole_mass, half_length, force, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def __init__(self, seed, max_steps=200):
        self.rng = np.random.RandomState(seed)
        self.max_steps = max_steps

    def reset(self):
        self.state = self.rng.uniform(-0.05, 0.05, size=4)
        self.t = 0
        return self.state.copy()

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        f = self.force if action == 1 else -self.force
        total = self.cart_mass + self.pole_mass
        ml = self.pole_mass * self.half_length
        cos, sin = math.cos(theta), math.sin(theta)
        tmp = (f + ml * theta_dot**2 * sin) / total
        theta_acc = (self.gravity * sin - cos * tmp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos**2 / total)
        )
        x_acc = tmp - ml * theta_acc * cos / total
        x, x_dot = x + self.dt * x_dot, x_dot + self.dt * x_acc
        theta, theta_dot = theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        self.t += 1
        fell = abs(x) > 2.4 or abs(theta) > 12 * math.pi / 180
        return self.state.copy(), 1.0, fell or self.t >= self.max_steps


class Policy(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.affine1 = nn.Linear(4, hidden)
        self.affine2 = nn.Linear(hidden, 2)
        self.saved_log_probs = []
        self.entropies = []
        self.rewards = []

    def forward(self, x):
        x = F.relu(self.affine1(x))
        return F.softmax(self.affine2(x), dim=1)


def select_action(policy, state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    policy.entropies.append(m.entropy())
    return action.item()


def finish_episode(policy, optimizer, gamma, beta):
    eps = np.finfo(np.float32).eps.item()
    R = 0
    returns = []
    for r in policy.rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = []
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    loss = torch.cat(policy_loss).sum() - beta * torch.cat(policy.entropies).sum()
    loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    del policy.entropies[:]
    return loss.item()


def main():
    parser = argparse.ArgumentParser(description="REINFORCE on a home-made cart-pole")
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--seed", type=int, default=543)
    parser.add_argument("--episodes", type=int, default=40)
    parser.add_argument("--max-steps", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-2)
    parser.add_argument("--entropy", type=float, default=1e-3)
    parser.add_argument("--log-interval", type=int, default=10)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    env = CartPole(args.seed, args.max_steps)
    policy = Policy(args.hidden)
    optimizer = optim.Adam(policy.parameters(), lr=args.lr)

    running_reward = 10
    first = None
    for i_episode in range(args.episodes):
        state, ep_reward = env.reset(), 0
        for t in count(1):
            action = select_action(policy, state)
            state, reward, done = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if done:
                break
        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        first = ep_reward if first is None else first
        loss = finish_episode(policy, optimizer, args.gamma, args.entropy)
        print(f"step {i_episode} loss {loss:.10f}")
        if i_episode % args.log_interval == 0:
            print(f"Episode {i_episode}\tLast reward: {ep_reward:.2f}\t"
                  f"Average reward: {running_reward:.2f}")  # fmt: skip
    print(f"running reward {running_reward:.4f}")


if __name__ == "__main__":
    main()
