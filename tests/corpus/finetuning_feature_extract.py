# Follows the shape of: PyTorch tutorial "Finetuning Torchvision Models" (feature extraction vs. finetuning) — https://pytorch.org/tutorials/beginner/finetuning_torchvision_models_tutorial.html (pytorch/tutorials: beginner_source/finetuning_torchvision_models_tutorial.py)
# What it exercises: set_parameter_requires_grad() turning requires_grad off for every parameter, replacing model.fc with a fresh nn.Linear (trainable), collecting params_to_update from named_parameters() where requires_grad is True, train_model() with 'train'/'val' phases, model.train()/model.eval(), torch.set_grad_enabled(phase == 'train'), torch.max(outputs, 1), running loss/corrects, copy.deepcopy(model.state_dict()) of the best weights and load_state_dict at the end; then the common follow-up of keeping the frozen backbone's BatchNorm in eval() mode (a freeze_bn helper) and freezing with module.requires_grad_(False); and the "from scratch" comparison with every parameter trainable.
# Adapted to run offline in a few seconds: a small ResNet-like network written here (conv stem, two BasicBlocks, avgpool, .fc), with random initial weights standing in for the ImageNet ones, instead of torchvision's resnet18 download; random 3x32x32 images in 2 classes (32 train / 16 val, batch 8) instead of the hymenoptera dataset at 224x224; 2 epochs instead of 15; no plot; the elapsed-time prints left out; fixed seed.
import copy

import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

num_classes = 2
batch_size = 8
num_epochs = 2
# True: only the new head learns. False: everything learns.
feature_extract = True


class BasicBlock(nn.Module):
    def __init__(self, planes):
        super().__init__()
        self.conv1 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.layer1 = nn.Sequential(BasicBlock(8), BasicBlock(8))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(8, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        x = self.layer1(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def train_model(model, dataloaders, criterion, optimizer, num_epochs=25):
    val_acc_history = []

    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0

    for epoch in range(num_epochs):
        print('Epoch {}/{}'.format(epoch, num_epochs - 1))
        print('-' * 10)

        # a training and a validation phase every epoch
        for phase in ['train', 'val']:
            if phase == 'train':
                model.train()
            else:
                model.eval()

            running_loss = 0.0
            running_corrects = 0

            for inputs, labels in dataloaders[phase]:
                # clear the parameter gradients
                optimizer.zero_grad()

                # forward; history only when training
                with torch.set_grad_enabled(phase == 'train'):
                    outputs = model(inputs)
                    loss = criterion(outputs, labels)

                    _, preds = torch.max(outputs, 1)

                    # backward + optimize only in training
                    if phase == 'train':
                        loss.backward()
                        optimizer.step()

                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data)

            epoch_loss = running_loss / len(dataloaders[phase].dataset)
            epoch_acc = running_corrects.double() / len(dataloaders[phase].dataset)

            print('{} Loss: {:.4f} Acc: {:.4f}'.format(phase, epoch_loss, epoch_acc))

            # remember the best weights
            if phase == 'val' and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = copy.deepcopy(model.state_dict())
            if phase == 'val':
                val_acc_history.append(epoch_acc)

        print()

    print('Best val Acc: {:4f}'.format(best_acc))

    # back to the best weights
    model.load_state_dict(best_model_wts)
    return model, val_acc_history


def set_parameter_requires_grad(model, feature_extracting):
    if feature_extracting:
        for param in model.parameters():
            param.requires_grad = False


def initialize_model(num_classes, feature_extract):
    model_ft = SmallResNet()  # stands in for models.resnet18(pretrained=True)
    set_parameter_requires_grad(model_ft, feature_extract)
    num_ftrs = model_ft.fc.in_features
    model_ft.fc = nn.Linear(num_ftrs, num_classes)
    input_size = 32
    return model_ft, input_size


model_ft, input_size = initialize_model(num_classes, feature_extract)
print(model_ft.fc)

image_datasets = {
    'train': TensorDataset(torch.randn(32, 3, input_size, input_size), torch.randint(0, num_classes, (32,))),
    'val': TensorDataset(torch.randn(16, 3, input_size, input_size), torch.randint(0, num_classes, (16,))),
}
dataloaders_dict = {x: DataLoader(image_datasets[x], batch_size=batch_size, shuffle=True) for x in ['train', 'val']}

# Only the parameters that still require grad go to the optimizer.
params_to_update = model_ft.parameters()
print("Params to learn:")
if feature_extract:
    params_to_update = []
    for name, param in model_ft.named_parameters():
        if param.requires_grad == True:
            params_to_update.append(param)
            print("\t", name)
else:
    for name, param in model_ft.named_parameters():
        if param.requires_grad == True:
            print("\t", name)

optimizer_ft = optim.SGD(params_to_update, lr=0.001, momentum=0.9)
criterion = nn.CrossEntropyLoss()

model_ft, hist = train_model(model_ft, dataloaders_dict, criterion, optimizer_ft, num_epochs=num_epochs)
print("conv1 grad after feature extraction:", model_ft.conv1.weight.grad)


# A frozen backbone still updates BatchNorm running statistics in train();
# a common fix keeps those layers in eval mode.
def freeze_bn(model):
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()


model_frozen, _ = initialize_model(num_classes, feature_extract=False)
model_frozen.layer1.requires_grad_(False)
model_frozen.train()
freeze_bn(model_frozen.layer1)
before = model_frozen.layer1[0].bn1.running_mean.clone()
out = model_frozen(torch.randn(4, 3, input_size, input_size))
out.sum().backward()
print("layer1 BN stats unchanged:", torch.equal(before, model_frozen.layer1[0].bn1.running_mean))
print("layer1 conv grad:", model_frozen.layer1[0].conv1.weight.grad, "| stem conv grad set:",
      model_frozen.conv1.weight.grad is not None)

# From scratch: every parameter trains.
scratch_model, _ = initialize_model(num_classes, feature_extract=False)
scratch_optimizer = optim.SGD(scratch_model.parameters(), lr=0.001, momentum=0.9)
scratch_criterion = nn.CrossEntropyLoss()
_, scratch_hist = train_model(scratch_model, dataloaders_dict, scratch_criterion, scratch_optimizer, num_epochs=num_epochs)
