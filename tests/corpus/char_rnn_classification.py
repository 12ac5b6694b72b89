# Follows the shape of: PyTorch tutorial "NLP From Scratch: Classifying Names with a Character-Level RNN" (classic edition, before the 2024 rewrite) — https://pytorch.org/tutorials/intermediate/char_rnn_classification_tutorial.html (pytorch/tutorials: intermediate_source/char_rnn_classification_tutorial.py)
# What it exercises: a hand-written RNN nn.Module (torch.cat of input and hidden, i2h and i2o Linear layers, LogSoftmax), one-hot letter tensors built with in-place writes, a Python loop over the characters of a name carrying the hidden state, rnn.zero_grad(), nn.NLLLoss, loss.backward(), the manual update `for p in rnn.parameters(): p.data.add_(p.grad.data, alpha=-learning_rate)`, output.topk, tracking all_losses, and evaluate()/predict() under torch.no_grad(); module-level script as the original.
# Adapted to run offline in a few seconds: a dozen names per language written into this file instead of the data/names/*.txt download (4 languages instead of 18); 120 training iterations instead of 100000, printing every 40; no matplotlib plots or confusion matrix; random and torch seeds fixed; the elapsed-time column left out.
import random
import string
import unicodedata

import torch
import torch.nn as nn

random.seed(0)
torch.manual_seed(0)

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters)


def unicodeToAscii(s):
    """Strip accents so every name uses only all_letters."""
    return ''.join(
        c for c in unicodedata.normalize('NFD', s)
        if unicodedata.category(c) != 'Mn'
        and c in all_letters
    )


print(unicodeToAscii('Ślusàrski'))

# The category_lines dictionary: a list of names per language.
raw_names = {
    'English': ['Smith', 'Johnson', 'Brown', 'Taylor', 'Walker', 'Wright', 'Green', 'Baker',
                'Hughes', 'Turner', 'Clarke', 'Cooper'],
    'French': ['Dubois', 'Lefèvre', 'Moreau', 'Girard', 'Rousseau', 'Fontaine', 'Chevalier',
               'Gauthier', 'Lambert', 'Bonnet', 'Mercier', 'Dupont'],
    'Japanese': ['Tanaka', 'Suzuki', 'Takahashi', 'Watanabe', 'Yamamoto', 'Nakamura',
                 'Kobayashi', 'Yoshida', 'Yamada', 'Sasaki', 'Matsumoto', 'Inoue'],
    'Polish': ['Nowak', 'Kowalski', 'Wiśniewski', 'Wójcik', 'Kowalczyk', 'Kamiński',
               'Lewandowski', 'Zieliński', 'Szymański', 'Woźniak', 'Dąbrowski', 'Kozłowski'],
}
category_lines = {}
all_categories = []
for category, names in raw_names.items():
    all_categories.append(category)
    category_lines[category] = [unicodeToAscii(name) for name in names]

n_categories = len(all_categories)
print(category_lines['Polish'][:5])


# A letter becomes a 1 x n_letters one-hot row; a name becomes a
# line_length x 1 x n_letters tensor.
def letterToIndex(letter):
    return all_letters.find(letter)


def letterToTensor(letter):
    tensor = torch.zeros(1, n_letters)
    tensor[0][letterToIndex(letter)] = 1
    return tensor


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


print(letterToTensor('J'))
print(lineToTensor('Jones').size())


class RNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(RNN, self).__init__()

        self.hidden_size = hidden_size

        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        combined = torch.cat((input, hidden), 1)
        hidden = self.i2h(combined)
        output = self.i2o(combined)
        output = self.softmax(output)
        return output, hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


n_hidden = 128
rnn = RNN(n_letters, n_hidden, n_categories)

# One step by hand.
input = lineToTensor('Albert')
hidden = torch.zeros(1, n_hidden)

output, next_hidden = rnn(input[0], hidden)
print(output)


def categoryFromOutput(output):
    top_n, top_i = output.topk(1)
    category_i = top_i[0].item()
    return all_categories[category_i], category_i


print(categoryFromOutput(output))


def randomChoice(l):
    return l[random.randint(0, len(l) - 1)]


def randomTrainingExample():
    category = randomChoice(all_categories)
    line = randomChoice(category_lines[category])
    category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
    line_tensor = lineToTensor(line)
    return category, line, category_tensor, line_tensor


for i in range(3):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    print('category =', category, '/ line =', line)

criterion = nn.NLLLoss()

learning_rate = 0.005  # too high and it diverges, too low and it learns nothing


def train(category_tensor, line_tensor):
    hidden = rnn.initHidden()

    rnn.zero_grad()

    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)

    loss = criterion(output, category_tensor)
    loss.backward()

    # Each parameter takes a step against its gradient, scaled by the learning rate.
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-learning_rate)

    return output, loss.item()


n_iters = 120
print_every = 40
plot_every = 20

# Running loss for the (omitted) plot.
current_loss = 0
all_losses = []

for iter in range(1, n_iters + 1):
    category, line, category_tensor, line_tensor = randomTrainingExample()
    output, loss = train(category_tensor, line_tensor)
    current_loss += loss

    # Iteration number, loss, name and guess.
    if iter % print_every == 0:
        guess, guess_i = categoryFromOutput(output)
        correct = '✓' if guess == category else '✗ (%s)' % category
        print('%d %d%% %.4f %s / %s %s' % (iter, iter / n_iters * 100, loss, line, guess, correct))

    # Average loss over the last plot_every iterations.
    if iter % plot_every == 0:
        all_losses.append(current_loss / plot_every)
        current_loss = 0

print([round(l, 3) for l in all_losses])


# Run a name through the network and return the final output.
def evaluate(line_tensor):
    hidden = rnn.initHidden()

    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)

    return output


def predict(input_line, n_predictions=3):
    print('\n> %s' % input_line)
    with torch.no_grad():
        output = evaluate(lineToTensor(input_line))

        # The n most likely categories.
        topv, topi = output.topk(n_predictions, 1, True)
        predictions = []

        for i in range(n_predictions):
            value = topv[0][i].item()
            category_index = topi[0][i].item()
            print('(%.2f) %s' % (value, all_categories[category_index]))
            predictions.append([value, all_categories[category_index]])


predict('Dovesky')
predict('Jackson')
predict('Satoshi')
