"""The words a drawing, its legend and its notes use, in every language the
tutor speaks: the markers in the picture (``[grad]``, ``x (old)``; in Chinese
``[有梯度]``, ``x（旧）``), what they mean, and the notes under a drawing.
"""

from __future__ import annotations

from typing import Callable

from gradtutor.model import HIDDEN_GLOBAL
from gradtutor.plurals import COUNTING
from gradtutor.typeset import tidy

# A place in the user's code, worded by the front end: "line 7", "In [3]".
Locate = Callable[[str, int], str]

# The markers drawn beside a node. ``old`` and ``dropped`` follow a name
# (``x (old)``), the others go in brackets, joined by ``sep`` (``[new, grad]``).
# ``global`` is how a global that a function's local of the same name hides
# is named (see ``shown_name``).
MARKS: dict[str, dict[str, str]] = {
    "en": {
        "new": "new",
        "leaf": "leaf",
        "grad": "grad",
        "freed": "freed",
        "none-saved": "none saved",
        "modified": "modified",
        "changed": "changed in place",
        "dual": "dual",
        "elided": "more before",
        "old": " (old)",
        "dropped": " (dropped)",
        "sep": ", ",
        "inside": "inside {label}",
        "global": "global {name}",
        "local_of": "{name} (in {function})",
    },
    "zh": {
        "new": "新建",
        "leaf": "叶子",
        "grad": "有梯度",
        "freed": "已释放",
        "none-saved": "未保存",
        "modified": "存值被改",
        "changed": "原地改过",
        "dual": "对偶",
        "elided": "前略",
        "old": " (旧)",
        "dropped": " (已丢弃)",
        "sep": "、",
        "inside": "{label} 之中",
        "global": "全局 {name}",
        "local_of": "{function} 中的 {name}",
    },
}


def marks(language: str) -> dict[str, str]:
    """The markers of ``language`` (English for a language without its own)."""
    return MARKS.get(language, MARKS["en"])


def shown_name(name: str, language: str) -> str:
    """A name from the program as ``language`` shows it: itself, but for a
    global that a function's local of the same name hides, whose name (a key
    the tutor finds it by, in English) is ``global x``: ``全局 x`` in Chinese."""
    if not name.startswith(HIDDEN_GLOBAL):
        return name
    return marks(language)["global"].format(name=name[len(HIDDEN_GLOBAL):])


WORDS: dict[str, dict[str, str]] = {
    "en": {
        "new": "created by this step",
        "leaf": "a leaf tensor that requires grad: backward fills its .grad",
        "grad": "its .grad is set",
        "freed": "its saved tensors were freed by {by}: a second backward through it fails",
        "freed_by_one": "the backward at {place}",
        "freed_by_many": "the backwards at {places}",
        "freed_by_any": "a backward",
        "none_saved": "it saved no tensors: backward can run through it again",
        "modified": "a tensor it saved was changed in place: backward through it fails",
        "changed": "changed in place ({places}): still the same tensor, now a newer version of it",
        "elided": "what it was computed from is left out of this picture",
        "focus": "not drawn, unchanged since the last picture: {names}{more} ({hint} shows the whole graph)",
        "focus_more": " and {count:more node|more nodes}",
        "focus_only": "{count:node|nodes}",
        "cut": "the first {lines} lines of this picture are not shown: what it was computed from ({hint} draws the whole graph)",
        "same_picture": "(the graph looks as in the last picture: not drawn again)",
        "fold": "{dots} n {times} {dots}: {nodes} nodes that the same lines made over and over (a loop, or a function "
        "called again and again), drawn as one ({hint} draws them all)",
        "dual": "a dual tensor of forward-mode AD: its tangent (a derivative) travels forward with its value; "
        "the tangent is not part of this picture, which is the graph backward runs through",
        "old": "the name now means another tensor; this one is drawn because a result still in the graph was computed "
        "from it",
        "old_module": "the name now means another module; this one is drawn because a result still in the graph was "
        "computed from its parameters, not the new module's",
        "dropped": "nothing uses it any more: shown this once, gone at the next step",
        "band": "a line that leaves a band at (a) goes on from (a) in the next band",
        "ref": "what it was computed from: each of those is an entry above it",
        "ref_params": "what it was computed from: each of those is an entry above it, or a parameter listed only there",
        "folded": "folded: {params} parameter{s} {transposes}are listed with the op that uses them",
        "folded_transposes": "and {n} TBackward0 transpose{s} (drawn as .T) ",
        "module": "{label}: {detail}, drawn as one node",
        "module_size": "{count} parameter{s}, {values} value{values_s}",
        "module_size_trainable": "{count} parameter{s} ({trainable} requiring grad), {values} value{values_s}",
        "module_size_old": "{count} parameter{s} in the graph, {values} value{values_s}",
        "also_from": "also from",
        "also_from_key": "the node it points at also reads these inputs; their lines would cross others, so they are named",
        "list_wide": "drawn as a list: no picture of it fits in {width} columns with every edge drawn",
        "list_many": "drawn as a list: {count} nodes are more than a picture shows well ({limit})",
        "empty": "(no autograd graph yet)",
        # Step headings, and notes on repeated steps not shown (runs of a line past
        # --max-iterations: in a loop, or in a function called again and again).
        "step_line": "line {line}",
        "step_in": " in {function}()",
        "step_run": ", run {n}",
        "continued": " (continued)",
        "step_leave": ", leaving",
        "hidden_what": "{count} {more}repeated step{s}",
        "hidden_more": "more ",
        "hidden_all": "in all, {count} repeated step{s}",
        "hidden_quiet": "({what} not shown: nothing new)",
        "hidden_again": "({what} not shown; what they did was shown above and happened again: {again})",
        "hidden_sep": "; ",
        "hidden_end": "; --max-iterations N shows more)",
        "quiet_function": "({count} later call{s} of {names} ran without being followed line by line: it touched no tensor in its first {stepped} calls)",
        "quiet_functions": "({count} later call{s} of {names} ran without being followed line by line: these functions touched no tensor in their first {stepped} calls)",
        "settled_function": "({count} later call{s} of {names} ran without being followed line by line, once its calls repeated themselves: what they did is told at the lines that called them, and their own lines are not counted above)",
        "settled_functions": "({count} later call{s} of {names} ran without being followed line by line, once their calls repeated themselves: what they did is told at the lines that called them, and their own lines are not counted above)",
        "quiet_more": " and {count} more",
        # Lists of places, a count of repeats, and a gradient too long to show.
        "output": "Output:",
        # The step-through page.
        "page_about": "Narrated by gradtutor {version}. Step with the buttons, the slider or the arrow keys.",
        "page_previous": "Previous",
        "page_next": "Next",
        "page_counter": "Step {n} of {total}",
        "page_step": "Step {n} of {total}: {place}",
        "page_steps": "steps",
        "page_step_label": "step",
        "page_code": "code",
        "list_sep": ", ",
        "changed_place": "{name}: {places}",
        "repeats": " ({times}{count})",
        "again_times": " {times}{count}",
        "grad_values": "<{count} values, mean {mean}>",
        "grad_shape": "<{shape}, mean {mean}, norm {norm}>",
    },
    "zh": {
        "new": "本步新建",
        "leaf": "需要梯度的叶子张量：反向传播会填写它的 .grad",
        "grad": "它的 .grad 已有值",
        "freed": "它保存的张量已被{by}释放：再次经过它的反向传播会失败",
        "freed_by_one": " {place} 的反向传播",
        "freed_by_many": " {places} 的反向传播",
        "freed_by_any": "一次反向传播",
        "none_saved": "它没有保存张量：反向传播可以再次经过它",
        "modified": "它保存的张量被原地修改过：经过它的反向传播会失败",
        "changed": "被原地修改过（{places}）：仍是同一个张量，只是版本更新了",
        "elided": "计算它所用的输入没有画在这张图里",
        "focus": "未画出、自上一张图以来没有改变的：{names}{more}（{hint} 显示整个计算图）",
        "focus_more": " 和另外 {count} 个节点",
        "focus_only": "{count} 个节点",
        "cut": "这张图的前 {lines} 行没有显示：那是计算它所用的部分（{hint} 画出整个计算图）",
        "same_picture": "（计算图看起来和上一张图一样：不再画一遍）",
        "fold": "{dots} n {times} {dots}：同样几行代码反复生成的 {nodes} 个节点（循环，或被一次次调用的函数），画成一个（{hint} 画出全部）",
        "dual": "前向模式自动微分的对偶张量：它的切向量（导数）随值一起向前传播；切向量不在这张图里，这张图是反向传播经过的计算图",
        "old": "这个名字现在指向另一个张量；画出这个张量，是因为计算图中仍有某个结果由它算出",
        "old_module": "这个名字现在指向另一个模块；画出原模块，是因为计算图中仍有某个结果由它的参数（而不是新模块的参数）算出",
        "dropped": "已经没有任何东西用到它：只显示这一次，下一步就消失",
        "band": "在 (a) 处离开一段的线，从下一段的 (a) 处继续",
        "ref": "计算它所用的节点：每一个都在它上方单独列出",
        "ref_params": "计算它所用的节点：每一个都在它上方单独列出，或是只在这里列出的参数",
        "folded": "已折叠：{params} 个参数 {transposes}与使用它们的操作列在一起",
        "folded_transposes": "和 {n} 个 TBackward0 转置（画作 .T）",
        "module": "{label}：{detail}，画作一个节点",
        "module_size": "{count} 个参数，{values} 个值",
        "module_size_trainable": "{count} 个参数（其中 {trainable} 个需要梯度），{values} 个值",
        "module_size_old": "计算图中的 {count} 个参数，{values} 个值",
        "also_from": "也来自",
        "also_from_key": "它所指的节点还读取这些输入；它们的连线会与其他线交叉，所以只写出名字",
        "list_wide": "画成列表：在 {width} 列内画不出每条边都完整的图",
        "list_many": "画成列表：{count} 个节点太多，图示不清楚（上限 {limit}）",
        "empty": "（还没有自动求导计算图）",
        "step_line": "第 {line} 行",
        "step_in": "，{function}() 中",
        "step_run": "，第 {n} 次",
        "continued": "（续）",
        "step_leave": "，离开",
        "hidden_what": "{more}{count} 个重复运行的步骤",
        "hidden_more": "另外 ",
        "hidden_all": "全程共 {count} 个重复运行的步骤",
        "hidden_quiet": "（{what}没有新内容，未显示）",
        "hidden_again": "（{what}未显示；它们做的事上面已显示过，又发生了：{again}）",
        "hidden_sep": "；",
        "hidden_end": "；--max-iterations N 可显示更多）",
        "quiet_function": "（{names}在最初 {stepped} 次调用中没有碰过张量，之后的 {count} 次调用没有逐行跟踪）",
        "quiet_functions": "（{names}在最初 {stepped} 次调用中没有碰过张量，之后的 {count} 次调用没有逐行跟踪）",
        "settled_function": "（{names}的调用重复了之前的内容以后，之后的 {count} 次调用没有逐行跟踪：它们做的事在调用它们的行中说明，它们自己的行不计入上面的次数）",
        "settled_functions": "（{names}的调用重复了之前的内容以后，之后的 {count} 次调用没有逐行跟踪：它们做的事在调用它们的行中说明，它们自己的行不计入上面的次数）",
        "quiet_more": "等另外 {count} 个函数",
        "output": "输出：",
        "page_about": "由 gradtutor {version} 讲解。用按钮、滑块或方向键逐步查看。",
        "page_previous": "上一步",
        "page_next": "下一步",
        "page_counter": "第 {n}/{total} 步",
        "page_step": "第 {n}/{total} 步：{place}",
        "page_steps": "步骤",
        "page_step_label": "步",
        "page_code": "代码",
        "list_sep": "、",
        "changed_place": "{name}：{places}",
        "repeats": "（{count} 次）",
        "again_times": "（{count} 次）",
        "grad_values": "<{count} 个值，均值 {mean}>",
        "grad_shape": "<{shape}，均值 {mean}，范数 {norm}>",
    },
}


def say(language: str, key: str, **fields: object) -> str:
    table = WORDS.get(language, WORDS["en"])
    return tidy(COUNTING.format(table.get(key, WORDS["en"][key]), **fields), language)


def plural(n: int) -> str:
    return "" if n == 1 else "s"


def default_locate(language: str) -> Locate:
    """Places in a script: "line 7" ("第 7 行")."""
    word = "第 {line} 行" if language == "zh" else "line {line}"
    return lambda file, line: word.format(line=line)
