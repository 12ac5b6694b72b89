# Follows the shape of: the PyTorch port of Raissi, Perdikaris & Karniadakis' physics-informed neural network for discovering the Burgers equation's coefficients — https://github.com/jayroxis/PINNs (Burgers Equation/Burgers Identification (PyTorch).ipynb), after https://github.com/maziarraissi/PINNs (appendix/continuous_time_identification (Burgers))
# What it exercises: inputs made with torch.tensor(X[:, 0:1], requires_grad=True).float() (a float64 leaf converted to a float32 non-leaf that the residual is differentiated against), unknown PDE coefficients as torch.tensor([...], requires_grad=True) wrapped in nn.Parameter and added with register_parameter, a DNN built from an OrderedDict of Linear/Tanh layers, u_t, u_x and u_xx by torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), retain_graph=True, create_graph=True) (second derivative through the first), a loss mixing data misfit and PDE residual, Adam steps, then LBFGS with line_search_fn="strong_wolfe" driven by a bound-method closure that calls zero_grad and backward, and predict() with model.eval() and detach().cpu().numpy().
# Adapted to run offline in a few seconds: instead of burgers_shock.mat, 100 random (x, t) points in [-1, 1] x [0, 1] labelled with a smooth made-up field u = -sin(pi x) exp(-t) (the same shapes: X is N_u x 2, u is N_u x 1); 3 hidden layers of 20 instead of 8; 30 Adam iterations (printing every 10) then LBFGS with max_iter=10 instead of 50000; no plotting or griddata; CPU only; seeds fixed.
from collections import OrderedDict

import numpy as np
import torch

np.random.seed(1234)
torch.manual_seed(1234)

# CUDA support
if torch.cuda.is_available():
    device = torch.device('cuda')
else:
    device = torch.device('cpu')


# the deep neural network
class DNN(torch.nn.Module):
    def __init__(self, layers):
        super(DNN, self).__init__()

        # parameters
        self.depth = len(layers) - 1

        # the activation class, instantiated once per hidden layer
        self.activation = torch.nn.Tanh

        layer_list = list()
        for i in range(self.depth - 1):
            layer_list.append(
                ('layer_%d' % i, torch.nn.Linear(layers[i], layers[i + 1]))
            )
            layer_list.append(('activation_%d' % i, self.activation()))

        layer_list.append(
            ('layer_%d' % (self.depth - 1), torch.nn.Linear(layers[-2], layers[-1]))
        )
        layerDict = OrderedDict(layer_list)

        # deploy layers
        self.layers = torch.nn.Sequential(layerDict)

    def forward(self, x):
        out = self.layers(x)
        return out


# the physics-informed neural network
class PhysicsInformedNN():
    def __init__(self, X, u, layers, lb, ub):

        # domain bounds
        self.lb = torch.tensor(lb).float().to(device)
        self.ub = torch.tensor(ub).float().to(device)

        # data; x and t are what the residual is differentiated against
        self.x = torch.tensor(X[:, 0:1], requires_grad=True).float().to(device)
        self.t = torch.tensor(X[:, 1:2], requires_grad=True).float().to(device)
        self.u = torch.tensor(u).float().to(device)

        # the two unknown coefficients of the PDE
        self.lambda_1 = torch.tensor([0.0], requires_grad=True).to(device)
        self.lambda_2 = torch.tensor([-6.0], requires_grad=True).to(device)

        self.lambda_1 = torch.nn.Parameter(self.lambda_1)
        self.lambda_2 = torch.nn.Parameter(self.lambda_2)

        # the network, which also owns the coefficients
        self.dnn = DNN(layers).to(device)
        self.dnn.register_parameter('lambda_1', self.lambda_1)
        self.dnn.register_parameter('lambda_2', self.lambda_2)

        # optimizers
        self.optimizer = torch.optim.LBFGS(
            self.dnn.parameters(),
            lr=1.0,
            max_iter=10,
            max_eval=12,
            history_size=50,
            tolerance_grad=1e-5,
            tolerance_change=1.0 * np.finfo(float).eps,
            line_search_fn="strong_wolfe"
        )

        self.optimizer_Adam = torch.optim.Adam(self.dnn.parameters())
        self.iter = 0

    def net_u(self, x, t):
        u = self.dnn(torch.cat([x, t], dim=1))
        return u

    def net_f(self, x, t):
        """Residual of u_t + lambda_1 u u_x - lambda_2 u_xx, by autograd."""
        lambda_1 = self.lambda_1
        lambda_2 = torch.exp(self.lambda_2)
        u = self.net_u(x, t)

        u_t = torch.autograd.grad(
            u, t,
            grad_outputs=torch.ones_like(u),
            retain_graph=True,
            create_graph=True
        )[0]
        u_x = torch.autograd.grad(
            u, x,
            grad_outputs=torch.ones_like(u),
            retain_graph=True,
            create_graph=True
        )[0]
        u_xx = torch.autograd.grad(
            u_x, x,
            grad_outputs=torch.ones_like(u_x),
            retain_graph=True,
            create_graph=True
        )[0]

        f = u_t + lambda_1 * u * u_x - lambda_2 * u_xx
        return f

    def loss_func(self):
        u_pred = self.net_u(self.x, self.t)
        f_pred = self.net_f(self.x, self.t)
        loss = torch.mean((self.u - u_pred) ** 2) + torch.mean(f_pred ** 2)
        self.optimizer.zero_grad()
        loss.backward()

        self.iter += 1
        if self.iter % 4 == 0:
            print(
                'Loss: %e, l1: %.5f, l2: %.5f' %
                (
                    loss.item(),
                    self.lambda_1.item(),
                    torch.exp(self.lambda_2.detach()).item()
                )
            )
        return loss

    def train(self, nIter):
        self.dnn.train()
        for epoch in range(nIter):
            u_pred = self.net_u(self.x, self.t)
            f_pred = self.net_f(self.x, self.t)
            loss = torch.mean((self.u - u_pred) ** 2) + torch.mean(f_pred ** 2)

            # Backward and optimize
            self.optimizer_Adam.zero_grad()
            loss.backward()
            self.optimizer_Adam.step()

            if epoch % 10 == 0:
                print(
                    'It: %d, Loss: %.3e, Lambda_1: %.3f, Lambda_2: %.6f' %
                    (
                        epoch,
                        loss.item(),
                        self.lambda_1.item(),
                        torch.exp(self.lambda_2).item()
                    )
                )

        # then full-batch LBFGS
        self.optimizer.step(self.loss_func)

    def predict(self, X):
        x = torch.tensor(X[:, 0:1], requires_grad=True).float().to(device)
        t = torch.tensor(X[:, 1:2], requires_grad=True).float().to(device)

        self.dnn.eval()
        u = self.net_u(x, t)
        f = self.net_f(x, t)
        u = u.detach().cpu().numpy()
        f = f.detach().cpu().numpy()
        return u, f


# Configurations
nu = 0.01 / np.pi

N_u = 100
layers = [2, 20, 20, 20, 1]

# stand-in for the simulated solution: a smooth field on the same domain
X_star = np.hstack((np.random.uniform(-1, 1, (400, 1)), np.random.uniform(0, 1, (400, 1))))
u_star = -np.sin(np.pi * X_star[:, 0:1]) * np.exp(-X_star[:, 1:2])

# Domain bounds
lb = X_star.min(0)
ub = X_star.max(0)

# training set
idx = np.random.choice(X_star.shape[0], N_u, replace=False)
X_u_train = X_star[idx, :]
u_train = u_star[idx, :]

model = PhysicsInformedNN(X_u_train, u_train, layers, lb, ub)
model.train(30)

# evaluation
u_pred, f_pred = model.predict(X_star)

error_u = np.linalg.norm(u_star - u_pred, 2) / np.linalg.norm(u_star, 2)

lambda_1_value = model.lambda_1.detach().cpu().numpy()
lambda_2_value = model.lambda_2.detach().cpu().numpy()
lambda_2_value = np.exp(lambda_2_value)

print('Error u: %e' % (error_u))
print('lambda_1: %.5f, lambda_2: %.5f' % (lambda_1_value[0], lambda_2_value[0]))
