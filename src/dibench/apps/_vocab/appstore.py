"""App-store catalog: invented apps and developers per category, with listing subtitles.

Every app has an English and a Chinese store name and developer, the way apps are localised;
subtitles are drawn per listing so two screens of one category read differently.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CATEGORIES", "AppEntry", "Category"]


class AppEntry(NamedTuple):
    name_en: str
    name_zh: str
    dev_en: str
    dev_zh: str


class Category(NamedTuple):
    key: str
    query_en: tuple[str, ...]
    query_zh: tuple[str, ...]
    label_en: str  # the category as a store shows it
    label_zh: str
    subtitles_en: tuple[str, ...]
    subtitles_zh: tuple[str, ...]
    apps: tuple[AppEntry, ...]
    size_mb: tuple[int, int]  # typical download size range


CATEGORIES = (
    Category(
        "photo_editor",
        ("photo editor", "photo editing app"),
        ("修图", "照片编辑"),
        "Photography",
        "摄影与录像",
        (
            "Photo Editor & Filters",
            "Edit Photos, Add Effects",
            "AI Photo Enhancer",
            "Retouch & Collage",
        ),
        ("一键美颜滤镜", "修图P图神器", "AI照片增强", "拼图与滤镜"),
        (
            AppEntry("Snapmark", "光影修图", "Brightleaf Labs", "明叶科技"),
            AppEntry("Lumina Studio", "流明工作室", "Lumina Apps Ltd.", "流明软件"),
            AppEntry("RetroCam", "复古相机", "Oldtown Software", "旧城软件"),
            AppEntry("Glow Editor", "美颜大师", "Glowly Inc.", "光彩网络"),
            AppEntry("Framewise", "框影", "Framewise GmbH", "框影科技"),
            AppEntry("Darkroom Pro", "暗房专业版", "Silverhalide Co.", "银盐科技"),
            AppEntry("Collage Maker Plus", "拼图大师", "Tilebox Apps", "拼图盒子"),
            AppEntry("ColorPop", "调色盘", "Paletta Media", "调色盘传媒"),
        ),
        (40, 260),
    ),
    Category(
        "notes",
        ("note taking app", "notes app"),
        ("笔记软件", "记事本"),
        "Productivity",
        "效率",
        ("Notes, Lists & Docs", "Handwriting & PDF Notes", "Simple Notepad", "Notes with Sync"),
        ("笔记与清单", "手写笔记与PDF批注", "简洁记事本", "多端同步笔记"),
        (
            AppEntry("Inkwell Notes", "墨水笔记", "Inkwell Software", "墨水软件"),
            AppEntry("Jotter", "随手记", "Papertrail Labs", "纸迹科技"),
            AppEntry("Notable", "有记", "Notable Apps", "有记科技"),
            AppEntry("Stack Notes", "叠叠笔记", "Stackline Inc.", "叠线科技"),
            AppEntry("Margin", "页边", "Marginalia Co.", "页边文化"),
            AppEntry("Mindgrove", "思维森林", "Grove Software", "森林软件"),
            AppEntry("Quill", "羽毛笔", "Quillworks Ltd.", "羽毛工坊"),
            AppEntry("Outline Go", "大纲速记", "Outline Labs", "大纲实验室"),
        ),
        (20, 180),
    ),
    Category(
        "fitness",
        ("workout app", "running tracker"),
        ("健身软件", "跑步记录"),
        "Health & Fitness",
        "健康健美",
        (
            "Workout & Running Tracker",
            "Home Workouts, No Equipment",
            "Run, Walk & Cycle",
            "Personal Trainer",
        ),
        ("运动健身跑步记录", "居家徒手训练", "跑步骑行健走", "私人健身教练"),
        (
            AppEntry("Stride", "步迹", "Stride Health Inc.", "步迹健康"),
            AppEntry("PulseFit", "脉动健身", "Pulse Digital", "脉动数字"),
            AppEntry("RunLoop", "跑圈", "Loop Sports Tech", "圈动体育"),
            AppEntry("Core Coach", "核心教练", "CoreCoach LLC", "核心教练科技"),
            AppEntry("Yoga Daily", "每日瑜伽", "Lotus Apps", "莲花应用"),
            AppEntry("HIIT Timer Pro", "燃脂计时器", "Burnbox Studio", "燃脂盒子"),
            AppEntry("TrailPace", "山径配速", "Trailpace Ltd.", "山径科技"),
            AppEntry("Home Workout Lab", "居家健身", "FitForge Inc.", "健锻科技"),
        ),
        (60, 320),
    ),
    Category(
        "budget",
        ("budget app", "expense tracker"),
        ("记账软件", "记账本"),
        "Finance",
        "财务",
        (
            "Budget & Expense Tracker",
            "Money Manager",
            "Bills & Savings Goals",
            "Split Expenses with Friends",
        ),
        ("记账理财", "个人记账本", "账单与存钱计划", "AA分账助手"),
        (
            AppEntry("Coinwise", "钱迹", "Coinwise Finance", "钱迹金融"),
            AppEntry("Ledgerly", "记账本", "Ledgerly Labs", "记账本科技"),
            AppEntry("Penny Jar", "存钱罐", "Penny Jar Apps", "存钱罐应用"),
            AppEntry("Budget Bee", "小蜜蜂记账", "Hive Money Inc.", "蜂巢理财"),
            AppEntry("SpendSense", "花销管家", "Sense Fintech", "感知金融"),
            AppEntry("Monthly", "月度账本", "Calendar Money Co.", "月历理财"),
            AppEntry("Splitly", "分账宝", "Splitly Inc.", "分账科技"),
            AppEntry("Piggy Plan", "小猪计划", "Oink Software", "小猪软件"),
        ),
        (15, 120),
    ),
    Category(
        "language",
        ("language learning app", "vocabulary app"),
        ("学外语", "背单词"),
        "Education",
        "教育",
        ("Learn Languages Fast", "Vocabulary Builder", "Speak with an AI Tutor", "Daily Lessons"),
        ("快速学外语", "背单词神器", "AI口语陪练", "每日一课"),
        (
            AppEntry("LinguaLeap", "语言跳跃", "Leap Learning", "跳跃教育"),
            AppEntry("WordNest", "单词窝", "Nest Education", "巢学教育"),
            AppEntry("Parla", "开口说", "Parla Labs", "开口说科技"),
            AppEntry("Flashcards Go", "闪卡记忆", "Cardstack Apps", "卡片堆"),
            AppEntry("Chatterbox", "话匣子", "Chatterbox Edu", "话匣子教育"),
            AppEntry("Kanji Path", "汉字之路", "Pathway Learning", "路径教育"),
            AppEntry("Phrasebook Pro", "随身短语", "Wayfarer Apps", "旅人应用"),
            AppEntry("Grammar Gym", "语法健身房", "Gym Mind Ltd.", "心智训练"),
        ),
        (50, 300),
    ),
    Category(
        "meditation",
        ("meditation app", "sleep sounds"),
        ("冥想", "助眠"),
        "Health & Fitness",
        "健康健美",
        (
            "Meditation & Sleep",
            "Relax, Focus, Sleep Better",
            "Sleep Sounds & Stories",
            "Guided Breathing",
        ),
        ("冥想与睡眠", "放松专注好睡眠", "白噪音助眠故事", "呼吸引导练习"),
        (
            AppEntry("Stillwater", "静水冥想", "Stillwater Wellness", "静水健康"),
            AppEntry("Breathe Easy", "轻松呼吸", "Airy Apps", "轻风应用"),
            AppEntry("Moonlit Sleep", "月光助眠", "Moonlit Media", "月光传媒"),
            AppEntry("Calm Corner", "安心角落", "Quiet Corner Co.", "安静角落"),
            AppEntry("Mindful Minutes", "正念时刻", "Minute Labs", "分钟实验室"),
            AppEntry("Rain Sounds HQ", "雨声助眠", "Ambient Works", "环境声工作室"),
            AppEntry("Serene", "宁", "Serene Health Inc.", "宁心健康"),
            AppEntry("Dreamscape", "梦境", "Dreamscape Studio", "梦境工作室"),
        ),
        (40, 240),
    ),
    Category(
        "puzzle",
        ("puzzle games", "offline puzzle game"),
        ("益智游戏", "单机解谜游戏"),
        "Games · Puzzle",
        "游戏 · 益智",
        ("Relaxing Puzzle Game", "Brain Teaser", "Offline Puzzle", "Daily Challenges"),
        ("休闲益智", "烧脑解谜", "离线可玩", "每日挑战"),
        (
            AppEntry("Tile Garden", "方块花园", "Sprout Games", "萌芽游戏"),
            AppEntry("Word Grove", "字林", "Grove Games", "林间游戏"),
            AppEntry("Sudoku Zen", "数独禅", "Zenplay", "禅玩"),
            AppEntry("Merge Manor", "合成庄园", "Manor Games Ltd.", "庄园游戏"),
            AppEntry("Hex Harmony", "六角和弦", "Hexagon Studio", "六边形工作室"),
            AppEntry("Jigsaw Journeys", "拼图之旅", "Puzzle Trail Inc.", "拼图轨迹"),
            AppEntry("Color Sort Pro", "颜色分类", "Tidy Games", "整理游戏"),
            AppEntry("Crossword Café", "填字咖啡馆", "Café Games", "咖啡馆游戏"),
        ),
        (80, 450),
    ),
    Category(
        "scanner",
        ("PDF scanner", "document scanner"),
        ("扫描王", "文档扫描"),
        "Business",
        "商务",
        ("PDF Scanner & OCR", "Scan Documents to PDF", "Text Recognition", "Sign & Share PDFs"),
        ("PDF扫描与文字识别", "文档扫描转PDF", "拍照识字", "PDF签名与分享"),
        (
            AppEntry("PaperLens", "纸镜扫描", "Lens Labs", "镜头实验室"),
            AppEntry("DocuSnap", "文档快拍", "DocuSoft Inc.", "文档软件"),
            AppEntry("Clearscan", "清晰扫描", "Clearview Apps", "清晰应用"),
            AppEntry("PDF Pocket", "口袋PDF", "Pocket Tools", "口袋工具"),
            AppEntry("TextGrab OCR", "文字识别王", "Grabbit Ltd.", "抓取科技"),
            AppEntry("Receipt Keeper", "票据管家", "Keeper Software", "管家软件"),
            AppEntry("Smart Scanner Go", "智能扫描仪", "Bright Tools", "明亮工具"),
            AppEntry("Copyfast", "速印扫描", "Copyfast Co.", "速印科技"),
        ),
        (25, 150),
    ),
)
