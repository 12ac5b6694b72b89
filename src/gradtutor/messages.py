"""The shell's own words, in every language the tutor speaks."""

from __future__ import annotations

from gradtutor.plurals import COUNTING

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "welcome": (
            "gradtutor {version} — PyTorch autograd, made visible.\n"
            "torch and F (torch.nn.functional) are imported. Type Python: after each "
            "statement you see what autograd did and the graph it built. Try:\n"
            "    x = torch.tensor(42., requires_grad=True)\n"
            "    f = x ** 2 + x ** 3\n"
            "    f.backward()\n"
            ":help lists the commands, :lesson starts a lesson, Ctrl-D or :quit leaves."
        ),
        "help_title": "Commands (anything else is Python):",
        "cmd_graph": "draw the graph, one node per statement",
        "cmd_ops": "draw the graph, one node per autograd operation",
        "cmd_names": "your names and the objects they refer to, side by side",
        "cmd_explain": "explain the last events in more depth",
        "cmd_reset": "start again with a fresh namespace",
        "cmd_history": "what you typed in this session",
        "cmd_lang": "show or set the language: :lang en, :lang zh",
        "cmd_lesson": "list the lessons, or start one: :lesson NAME",
        "cmd_help": "this list",
        "cmd_quit": "leave (also Ctrl-D, exit())",
        "cmd_export": "save the session so far: :export FILE.md, .html, .svg or .dot",
        "export_usage": ":export takes a file name: :export session.md (.md, .html, .svg, .dot)",
        "export_done": "Wrote {count:input|inputs} to {path} ({format}).",
        "export_graph_done": "Wrote the graph after {place} to {path} ({format}).",
        "keys": "Enter runs a complete statement; Alt-Enter (or Esc Enter) adds a line; "
        "Ctrl-R searches history; Tab completes; Ctrl-C clears the line or stops running code.",
        "unknown_command": "unknown command '{command}': :help lists the commands",
        "command_args": "{command} takes no arguments",
        "empty_graph": "No tensor that requires grad is bound to a name yet, so there is no graph to draw.",
        "nothing_to_explain": "Nothing to explain yet: run a statement first.",
        "reset_done": "Namespace reset: torch and F are imported, everything else is gone.",
        "history_empty": "No input yet.",
        "magic": "{magic} is a magic of IPython, not Python: this shell runs plain Python. To time "
        "a statement, use timeit: import timeit; timeit.timeit(\"x * 2\", globals=globals(), number=1000). "
        "(In IPython or Jupyter, %load_ext gradtutor brings the tutor there, magics included.)",
        "help_failed": "No help for {name}: {error}",
        "help_type": "Type:",
        "help_value": "Value:",
        "help_signature": "Signature:",
        "help_doc": "Docstring:",
        "help_no_doc": "(no docstring)",
        "help_cut": "… {count:more line|more lines}: help({name}) shows them all",
        "lang_now": "Language: {language}",
        "lang_bad": "unknown language '{language}': use en or zh",
        "interrupted": "KeyboardInterrupt: stopped. Your names are as the interrupted statement left them.",
        "internal_error": "gradtutor could not follow line {line} ({error}): that step is not narrated; your code ran unchanged.",
        "names_none": "No names bound yet.",
        "names_name": "name",
        "names_type": "type",
        "names_object": "what it is",
        "names_title": "names → objects",
        "still_in_graph": "no name, still in the graph (was {names})",
        "loading": "(waiting for torch to finish importing…)",
        "lesson_title": "Lesson {number}: {title}",
        "lesson_step": "Step {n}/{total}",
        "lesson_continue": "(Enter or :next to continue)",
        "lesson_answer_prompt": "Type the number of your answer.",
        "lesson_right": "Right.",
        "lesson_wrong": "Not quite.",
        "lesson_try_again": "Try again: type another number.",
        "lesson_task_keys": ":hint for a hint, :solution to see one answer, :skip to move on.",
        "lesson_task_done": "✓ Task complete.",
        "lesson_task_not_yet": "Not yet: the checks do not pass. :hint helps.",
        "lesson_no_hints": "No more hints for this step.",
        "lesson_no_hints_here": "Hints are for tasks; this step has none.",
        "lesson_hint": "Hint {n}/{total}: {text}",
        "lesson_solution": "One solution:",
        "lesson_answer_was": "The answer: {choice}",
        "lesson_done": "Lesson complete: {title}. :lesson lists the others.",
        "lesson_left": "You left the lesson at step {n}. :lesson {id} resumes there.",
        "lesson_names_aside": "The lesson starts with a fresh namespace. Your names ({names}) are put aside "
        "and come back when it ends or you :quit.",
        "lesson_names_back": "Your names are back: {names}.",
        "lesson_resumed": "Resuming at step {n}; the code of the earlier steps ran again to rebuild your names.",
        "lesson_outside": "This lesson comes from {path}, outside the bundled course: its code runs in this shell.",
        "lesson_need_answer": "Answer first (type a number), or :skip.",
        "lesson_need_task": "Finish the task first, or :skip.",
        "lesson_restarted": "Lesson restarted with a fresh namespace.",
        "lesson_none_active": "No lesson is running. :lesson lists them.",
        "lessons_title": "Lessons (start one with :lesson NAME, or gradtutor lesson NAME)",
        "lesson_state_done": "done",
        "lesson_state_at": "at step {n}/{total}",
        "lesson_state_new": "not started",
        "lesson_keys": "In a lesson: :next, :hint, :solution, :skip, :restart, :quit (leaves the lesson).",
        "lesson_broken": "Skipped a broken lesson file: {error}",
        "bye": "",
    },
    "zh": {
        "welcome": (
            "gradtutor {version} —— 让 PyTorch 自动求导看得见。\n"
            "已导入 torch 和 F（torch.nn.functional）。输入 Python 代码：每条语句执行后，"
            "你会看到自动求导做了什么，以及它构建的计算图。试试：\n"
            "    x = torch.tensor(42., requires_grad=True)\n"
            "    f = x ** 2 + x ** 3\n"
            "    f.backward()\n"
            ":help 列出命令，:lesson 开始一节课，Ctrl-D 或 :quit 退出。"
        ),
        "help_title": "命令（其余输入都按 Python 执行）：",
        "cmd_graph": "画出计算图，每条语句一个节点",
        "cmd_ops": "画出计算图，每个自动求导操作一个节点",
        "cmd_names": "并排列出你的变量名和它们指向的对象",
        "cmd_explain": "更深入地解释刚才的事件",
        "cmd_reset": "清空命名空间，重新开始",
        "cmd_history": "本次会话中输入过的内容",
        "cmd_lang": "查看或设置语言：:lang en、:lang zh",
        "cmd_lesson": "列出课程，或开始一节课：:lesson 课程名",
        "cmd_help": "显示本列表",
        "cmd_quit": "退出（也可以用 Ctrl-D、exit()）",
        "cmd_export": "保存到目前为止的会话：:export 文件.md、.html、.svg 或 .dot",
        "export_usage": ":export 需要一个文件名：:export session.md（.md、.html、.svg、.dot）",
        "export_done": "已把 {count} 条输入写入 {path}（{format}）。",
        "export_graph_done": "已把 {place} 之后的计算图写入 {path}（{format}）。",
        "keys": "回车执行完整的语句；Alt-回车（或 Esc 回车）换行；Ctrl-R 搜索历史；Tab 补全；"
        "Ctrl-C 清空当前行或中断正在运行的代码。",
        "unknown_command": "未知命令 '{command}'：输入 :help 查看命令列表",
        "command_args": "{command} 不接受参数",
        "empty_graph": "还没有任何变量名指向需要梯度的张量，所以没有计算图可画。",
        "nothing_to_explain": "还没有可以解释的内容：先执行一条语句。",
        "reset_done": "命名空间已重置：torch 和 F 已导入，其他变量都已清除。",
        "history_empty": "还没有输入。",
        "magic": "{magic} 是 IPython 的魔法命令，不是 Python：这个 shell 只运行纯 Python。要给一条语句计时，"
        "请用 timeit：import timeit; timeit.timeit(\"x * 2\", globals=globals(), number=1000)。"
        "（在 IPython 或 Jupyter 中，%load_ext gradtutor 会把本工具带过去，魔法命令照常可用。）",
        "help_failed": "无法显示 {name} 的帮助：{error}",
        "help_type": "类型：",
        "help_value": "值：",
        "help_signature": "签名：",
        "help_doc": "文档：",
        "help_no_doc": "（没有文档字符串）",
        "help_cut": "……还有 {count} 行：help({name}) 显示全部",
        "lang_now": "语言：{language}",
        "lang_bad": "未知语言 '{language}'：请用 en 或 zh",
        "interrupted": "KeyboardInterrupt：已中断。变量保持被中断语句执行到的状态。",
        "internal_error": "gradtutor 未能跟踪第 {line} 行（{error}）：这一步没有讲解；你的代码照常运行。",
        "names_none": "还没有绑定任何变量名。",
        "names_name": "名字",
        "names_type": "类型",
        "names_object": "内容",
        "names_title": "变量名 → 对象",
        "still_in_graph": "没有名字，但仍在计算图中（原名 {names}）",
        "loading": "（正在等待 torch 导入完成……）",
        "lesson_title": "第 {number} 课：{title}",
        "lesson_step": "第 {n}/{total} 步",
        "lesson_continue": "（按回车或输入 :next 继续）",
        "lesson_answer_prompt": "输入你选择的答案编号。",
        "lesson_right": "答对了。",
        "lesson_wrong": "不太对。",
        "lesson_try_again": "再试一次：输入另一个编号。",
        "lesson_task_keys": ":hint 查看提示，:solution 查看一种答案，:skip 跳过。",
        "lesson_task_done": "✓ 任务完成。",
        "lesson_task_not_yet": "还没有完成：检查没有通过。可以用 :hint 获取提示。",
        "lesson_no_hints": "这一步没有更多提示了。",
        "lesson_no_hints_here": "提示只用于任务，这一步没有提示。",
        "lesson_hint": "提示 {n}/{total}：{text}",
        "lesson_solution": "一种答案：",
        "lesson_answer_was": "答案是：{choice}",
        "lesson_done": "课程完成：{title}。输入 :lesson 查看其他课程。",
        "lesson_left": "你在第 {n} 步离开了课程。输入 :lesson {id} 可以从那里继续。",
        "lesson_names_aside": "课程从一个全新的命名空间开始。你的变量（{names}）先放在一边，"
        "课程结束或输入 :quit 后会回来。",
        "lesson_names_back": "你的变量回来了：{names}。",
        "lesson_resumed": "从第 {n} 步继续；前面各步的代码已重新运行，恢复了你的变量。",
        "lesson_outside": "这节课来自 {path}，不属于自带课程：它的代码会在这个 shell 中运行。",
        "lesson_need_answer": "请先回答（输入编号），或输入 :skip 跳过。",
        "lesson_need_task": "请先完成任务，或输入 :skip 跳过。",
        "lesson_restarted": "课程已重新开始，命名空间已清空。",
        "lesson_none_active": "当前没有进行中的课程。输入 :lesson 查看课程列表。",
        "lessons_title": "课程（用 :lesson 课程名 或 gradtutor lesson 课程名 开始）",
        "lesson_state_done": "已完成",
        "lesson_state_at": "进行到第 {n}/{total} 步",
        "lesson_state_new": "未开始",
        "lesson_keys": "课程中可用：:next、:hint、:solution、:skip、:restart、:quit（离开课程）。",
        "lesson_broken": "跳过了一个有错误的课程文件：{error}",
        "bye": "",
    },
}


def message(language: str, key: str, /, **fields: object) -> str:
    table = MESSAGES.get(language, MESSAGES["en"])
    return COUNTING.format(table.get(key, MESSAGES["en"][key]), **fields)
