# Follows the shape of: caogang/wgan-gp (PyTorch port of "Improved Training of Wasserstein GANs"), toy 8-gaussians experiment — https://github.com/caogang/wgan-gp (gan_toy.py)
# What it exercises: MLP Generator/Discriminator with in-place ReLU(True), weights_init through .data.normal_/.fill_, an infinite numpy data generator, calc_gradient_penalty with torch.autograd.grad(outputs=..., inputs=interpolates, grad_outputs=ones, create_graph=True, retain_graph=True) and a penalty on gradients.norm(2, dim=1) (double backward), backward(mone)/backward(one) with explicit gradient tensors, several critic iterations per generator step, toggling p.requires_grad on netD's parameters, a generator sample computed under torch.no_grad() for the critic step; module-level script as the original.
# Adapted to run offline in a few seconds: DIM 64 instead of 512, BATCH_SIZE 64 instead of 256, 3 generator iterations instead of 100000 (CRITIC_ITERS 5 kept), costs printed each iteration instead of tflib plots and saved frames; no sklearn (only the 8gaussians data set); Python 3 (next(data), range); the deprecated autograd.Variable(volatile=True) freeze written as torch.no_grad(); `one`/`mone` are 0-d tensors so they match the 0-d means; CPU only; seeds fixed.
import random

import numpy as np
import torch
import torch.autograd as autograd
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(1)
np.random.seed(1)
random.seed(1)

MODE = 'wgan-gp'  # wgan or wgan-gp
DATASET = '8gaussians'
DIM = 64  # width of the hidden layers
FIXED_GENERATOR = False  # if True, G just returns its noise
LAMBDA = .1  # weight of the gradient penalty
CRITIC_ITERS = 5  # critic updates for every generator update
BATCH_SIZE = 64
ITERS = 3  # generator iterations
use_cuda = False


class Generator(nn.Module):

    def __init__(self):
        super(Generator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 2),
        )
        self.main = main

    def forward(self, noise):
        if FIXED_GENERATOR:
            return noise
        else:
            output = self.main(noise)
            return output


class Discriminator(nn.Module):

    def __init__(self):
        super(Discriminator, self).__init__()

        main = nn.Sequential(
            nn.Linear(2, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, DIM),
            nn.ReLU(True),
            nn.Linear(DIM, 1),
        )
        self.main = main

    def forward(self, inputs):
        output = self.main(inputs)
        return output.view(-1)


# Small normal weights, zero biases, for both networks.
def weights_init(m):
    classname = m.__class__.__name__
    if classname.find('Linear') != -1:
        m.weight.data.normal_(0.0, 0.02)
        m.bias.data.fill_(0)
    elif classname.find('BatchNorm') != -1:
        m.weight.data.normal_(1.0, 0.02)
        m.bias.data.fill_(0)


# Endless stream of batches from eight gaussians on a circle.
def inf_train_gen():
    scale = 2.
    r = 1. / np.sqrt(2)
    centers = [(1, 0), (-1, 0), (0, 1), (0, -1), (r, r), (r, -r), (-r, r), (-r, -r)]
    centers = [(scale * x, scale * y) for x, y in centers]
    while True:
        dataset = []
        for i in range(BATCH_SIZE):
            point = np.random.randn(2) * .02
            center = random.choice(centers)
            point[0] += center[0]
            point[1] += center[1]
            dataset.append(point)
        dataset = np.array(dataset, dtype='float32')
        dataset /= 1.414  # roughly unit standard deviation
        yield dataset


def calc_gradient_penalty(netD, real_data, fake_data):
    # One mixing weight per sample, broadcast over the two coordinates.
    alpha = torch.rand(BATCH_SIZE, 1)
    alpha = alpha.expand(real_data.size())

    interpolates = alpha * real_data + ((1 - alpha) * fake_data)
    interpolates = autograd.Variable(interpolates, requires_grad=True)

    disc_interpolates = netD(interpolates)

    # The gradient itself must stay differentiable: the penalty is backpropagated.
    gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                              grad_outputs=torch.ones(disc_interpolates.size()),
                              create_graph=True, retain_graph=True, only_inputs=True)[0]

    gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * LAMBDA
    return gradient_penalty


netG = Generator()
netD = Discriminator()
netD.apply(weights_init)
netG.apply(weights_init)
print(netG)
print(netD)

optimizerD = optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optimizerG = optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))

one = torch.tensor(1.0)
mone = one * -1

data = inf_train_gen()

for iteration in range(ITERS):
    ############################
    # (1) Update D network
    ###########################
    for p in netD.parameters():  # switched off again for the G step below
        p.requires_grad = True

    for iter_d in range(CRITIC_ITERS):
        _data = next(data)
        real_data = torch.Tensor(_data)

        netD.zero_grad()

        # real samples: push D(real) up
        D_real = netD(real_data)
        D_real = D_real.mean()
        D_real.backward(mone)

        # fake samples: push D(fake) down; G is not trained here
        noise = torch.randn(BATCH_SIZE, 2)
        with torch.no_grad():
            fake = netG(noise)
        inputv = fake
        D_fake = netD(inputv)
        D_fake = D_fake.mean()
        D_fake.backward(one)

        # gradient penalty on points between real and fake
        gradient_penalty = calc_gradient_penalty(netD, real_data.data, fake.data)
        gradient_penalty.backward(one)

        D_cost = D_fake - D_real + gradient_penalty
        Wasserstein_D = D_real - D_fake
        optimizerD.step()

    ############################
    # (2) Update G network
    ###########################
    for p in netD.parameters():
        p.requires_grad = False  # no grads for D while G learns
    netG.zero_grad()

    noise = torch.randn(BATCH_SIZE, 2)
    fake = netG(noise)
    G = netD(fake)
    G = G.mean()
    G.backward(mone)
    G_cost = -G
    optimizerG.step()

    print('iter %d  disc cost %.6f  gen cost %.6f  wasserstein %.6f' % (
        iteration, D_cost.item(), G_cost.item(), Wasserstein_D.item()))
