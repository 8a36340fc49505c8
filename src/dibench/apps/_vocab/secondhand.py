"""Second-hand market catalog: item kinds, brands/models with new prices, seller phrasing.

Listings are written the way private sellers write them (casual, long, with condition and
selling points), so titles overflow two lines like real marketplace cards.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "AREAS_EN",
    "AREAS_ZH",
    "CONDITIONS",
    "CONDITION_VALUE",
    "COND_PHRASES_EN",
    "COND_PHRASES_ZH",
    "DELIVERY",
    "KINDS",
    "SELLERS_EN",
    "SELLERS_ZH",
    "SUFFIX_EN",
    "SUFFIX_ZH",
    "UsedItem",
    "UsedKind",
]


class UsedItem(NamedTuple):
    brand_en: str
    brand_zh: str
    market: str  # 'g', 'w' or 'c' as in the shopping catalog
    model: str
    usd: float  # price when new
    cny: float
    model_zh: str = ""


class UsedKind(NamedTuple):
    key: str
    motif: str  # cover: item:<motif>
    query_en: str
    query_zh: str
    specs_en: tuple[str, ...]
    specs_zh: tuple[str, ...]
    extras_en: tuple[str, ...]
    extras_zh: tuple[str, ...]
    items: tuple[UsedItem, ...]


# (en, zh) condition: the 'condition' enum, best first; and the share of the new price it fetches
CONDITIONS = (("Like new", "99新"), ("Very good", "95新"), ("Good", "9成新"), ("Fair", "8成新"))
CONDITION_VALUE = (0.8, 0.68, 0.56, 0.42)
COND_PHRASES_EN = (
    ("barely used", "like new, no scratches", "used only a couple of times"),
    ("very good condition", "minor signs of use", "well looked after"),
    ("good condition, light scratches", "works perfectly, some wear"),
    ("well used but fully working", "visible wear, works fine"),
)
COND_PHRASES_ZH = (
    ("几乎全新", "只用过两次", "无划痕无磕碰"),
    ("成色很好", "轻微使用痕迹", "一直戴套使用"),
    ("正常使用痕迹", "功能完好 外观有细微划痕"),
    ("有明显磨损", "功能正常 外观一般"),
)
DELIVERY = (("Shipping", "包邮"), ("Local pickup", "同城自提"))

SUFFIX_EN = (
    "price negotiable",
    "pickup preferred",
    "moving sale",
    "no lowballers",
    "receipt available",
    "first come first served",
    "",
)
SUFFIX_ZH = ("可小刀", "搬家急出", "闲置转让", "有发票", "非诚勿扰", "先到先得", "")

AREAS_EN = (
    "Mission",
    "SoMa",
    "Sunset",
    "Richmond",
    "Noe Valley",
    "Oakland",
    "Berkeley",
    "Daly City",
    "Palo Alto",
    "San Mateo",
    "Fremont",
    "Alameda",
    "Marina",
    "Castro",
)
AREAS_ZH = (
    "朝阳区",
    "海淀区",
    "浦东新区",
    "徐汇区",
    "静安区",
    "南山区",
    "福田区",
    "天河区",
    "越秀区",
    "西湖区",
    "滨江区",
    "武侯区",
    "锦江区",
    "江宁区",
)
SELLERS_EN = (
    "Mike R.",
    "Sarah K.",
    "Jen L.",
    "Tom W.",
    "Priya S.",
    "Carlos M.",
    "Emily T.",
    "Dan H.",
    "Aisha B.",
    "Kevin O.",
    "Laura P.",
    "Sam C.",
    "Nina G.",
    "Ben F.",
)
SELLERS_ZH = (
    "小鱼儿",
    "大橘为重",
    "一只喵",
    "阿杰的闲置",
    "晴天小铺",
    "木木",
    "拾柒",
    "老王的杂货",
    "江南小哥",
    "清风徐来",
    "豆豆妈",
    "北漂阿明",
    "奶茶续命",
    "闲置达人",
)

KINDS = (
    UsedKind(
        "phone",
        "phone",
        "used phone",
        "二手手机",
        ("128GB", "256GB", "512GB"),
        ("128G", "256G", "512G"),
        (
            "battery health 89%",
            "unlocked",
            "comes with case",
            "original box included",
            "Face ID works",
            "screen protector on since day one",
        ),
        ("电池89%", "全网通", "送手机壳", "原装盒子都在", "面容正常", "一直贴膜"),
        (
            UsedItem("Apple", "苹果", "g", "iPhone 13", 599, 4399),
            UsedItem("Apple", "苹果", "g", "iPhone 14 Pro", 999, 7999),
            UsedItem("Apple", "苹果", "g", "iPhone 15", 799, 5999),
            UsedItem("Apple", "苹果", "g", "iPhone 12", 499, 3999),
            UsedItem("Samsung", "三星", "g", "Galaxy S23", 799, 5499),
            UsedItem("Samsung", "三星", "g", "Galaxy S22 Ultra", 1199, 8999),
            UsedItem("Google", "谷歌", "w", "Pixel 8", 699, 4999),
            UsedItem("Google", "谷歌", "w", "Pixel 7a", 499, 3299),
            UsedItem("Huawei", "华为", "c", "Mate 60 Pro", 999, 6999),
            UsedItem("Huawei", "华为", "c", "P60", 799, 4988),
            UsedItem("Xiaomi", "小米", "c", "Xiaomi 14", 699, 3999),
            UsedItem("Xiaomi", "小米", "c", "Redmi K70", 399, 2499),
            UsedItem("OnePlus", "一加", "g", "OnePlus 12", 799, 4299),
        ),
    ),
    UsedKind(
        "laptop",
        "laptop",
        "used laptop",
        "二手笔记本电脑",
        ("8GB/256GB", "16GB/512GB", "16GB/1TB"),
        ("8+256G", "16+512G", "16+1T"),
        (
            "battery cycle count 120",
            "charger included",
            "no dead pixels",
            "keyboard like new",
            "freshly reset",
            "AppleCare until next year",
        ),
        ("电池循环120次", "送原装充电器", "屏幕无坏点", "键盘无磨损", "已恢复出厂", "在保"),
        (
            UsedItem("Apple", "苹果", "g", "MacBook Air M1", 999, 7999),
            UsedItem("Apple", "苹果", "g", "MacBook Air M2", 1099, 8999),
            UsedItem("Apple", "苹果", "g", "MacBook Pro 14 M1 Pro", 1999, 14999),
            UsedItem("Lenovo", "联想", "g", "ThinkPad X1 Carbon Gen 9", 1499, 9999),
            UsedItem("Lenovo", "联想", "g", "ThinkPad T14", 1099, 6999),
            UsedItem("Lenovo", "联想", "c", "Legion 5 Pro", 1299, 8999, "拯救者Y9000P"),
            UsedItem("Dell", "戴尔", "g", "XPS 13", 1099, 8999),
            UsedItem("HP", "惠普", "g", "Spectre x360", 1299, 9999),
            UsedItem("ASUS", "华硕", "g", "ROG Zephyrus G14", 1499, 9999),
            UsedItem("Huawei", "华为", "c", "MateBook X Pro", 1599, 9999),
            UsedItem("Microsoft", "微软", "w", "Surface Laptop 4", 999, 7988),
            UsedItem("Xiaomi", "小米", "c", "Redmi Book Pro 15", 749, 4999),
        ),
    ),
    UsedKind(
        "camera",
        "camera",
        "used camera",
        "二手相机",
        ("body only", "with kit lens", "with 2 lenses"),
        ("单机身", "带套头", "双镜头套装"),
        (
            "shutter count 8k",
            "two batteries",
            "strap and bag included",
            "sensor clean",
            "bought last year",
            "all original accessories",
        ),
        ("快门8000次", "两块电池", "送相机包和背带", "传感器干净", "去年购入", "配件齐全"),
        (
            UsedItem("Sony", "索尼", "g", "A7 III", 1999, 13999),
            UsedItem("Sony", "索尼", "g", "A6400", 899, 6499),
            UsedItem("Canon", "佳能", "g", "EOS R6", 2499, 15999),
            UsedItem("Canon", "佳能", "g", "EOS 80D", 999, 6999),
            UsedItem("Canon", "佳能", "g", "EOS M50", 599, 4499),
            UsedItem("Nikon", "尼康", "g", "Z6 II", 1999, 12999),
            UsedItem("Nikon", "尼康", "g", "D750", 1499, 9999),
            UsedItem("Fujifilm", "富士", "g", "X-T4", 1699, 11999),
            UsedItem("Fujifilm", "富士", "g", "X100V", 1399, 9999),
            UsedItem("Ricoh", "理光", "g", "GR III", 899, 6999),
            UsedItem("GoPro", "GoPro", "w", "HERO11 Black", 399, 2998),
            UsedItem("DJI", "大疆", "c", "Pocket 2", 349, 2499),
        ),
    ),
    UsedKind(
        "bike",
        "bike",
        "used bike",
        "二手自行车",
        ("size S", "size M", "size L"),
        ("S码", "M码", "L码"),
        (
            "new tires",
            "recently tuned up",
            "lock and lights included",
            "shifts smoothly",
            "kept indoors",
            "helmet thrown in",
        ),
        ("刚换新胎", "刚做过保养", "送车锁车灯", "变速顺滑", "一直放室内", "送头盔"),
        (
            UsedItem("Giant", "捷安特", "g", "Escape 3", 500, 2598),
            UsedItem("Giant", "捷安特", "g", "TCR Advanced 2", 2200, 12998),
            UsedItem("Trek", "崔克", "w", "FX 2", 900, 4580),
            UsedItem("Trek", "崔克", "w", "Domane AL 2", 1100, 6280),
            UsedItem("Specialized", "闪电", "w", "Sirrus 2.0", 800, 4500),
            UsedItem("Specialized", "闪电", "w", "Allez", 1100, 7500),
            UsedItem("Brompton", "小布", "g", "C Line", 1700, 16800),
            UsedItem("Dahon", "大行", "c", "K3", 700, 3299),
            UsedItem("Cannondale", "佳能戴尔", "w", "Quick 4", 850, 4999),
            UsedItem("Merida", "美利达", "g", "Scultura 400", 1300, 6998),
            UsedItem("Decathlon", "迪卡侬", "g", "Riverside 500", 450, 2299),
            UsedItem("Phoenix", "凤凰", "c", "City Commuter", 150, 599, "通勤自行车"),
            UsedItem("Forever", "永久", "c", "C Classic", 180, 699, "复古公路车"),
        ),
    ),
    UsedKind(
        "guitar",
        "guitar",
        "used guitar",
        "二手吉他",
        ("with gig bag", "with hard case", "with amp"),
        ("送琴包", "送硬盒", "送音箱"),
        (
            "new strings",
            "action set low",
            "no cracks",
            "barely played",
            "tuner included",
            "great for beginners",
        ),
        ("刚换新弦", "弦距已调低", "无开裂", "几乎没弹过", "送调音器", "适合新手"),
        (
            UsedItem("Fender", "芬达", "w", "Player Stratocaster", 850, 6500),
            UsedItem("Fender", "芬达", "w", "CD-60S", 230, 1599),
            UsedItem("Yamaha", "雅马哈", "g", "FG800", 230, 1380),
            UsedItem("Yamaha", "雅马哈", "g", "Pacifica 112V", 330, 2280),
            UsedItem("Taylor", "泰勒", "w", "GS Mini", 500, 4590),
            UsedItem("Martin", "马丁", "w", "D-X2E", 650, 5500),
            UsedItem("Gibson", "吉普森", "w", "Les Paul Studio", 1699, 12800),
            UsedItem("Epiphone", "依霹风", "w", "Les Paul Standard", 599, 3999),
            UsedItem("Ibanez", "依班娜", "g", "GRG121DX", 280, 1799),
            UsedItem("Enya", "恩雅", "c", "EM-X1", 199, 999),
            UsedItem("Saga", "萨伽", "c", "SF700C", 299, 1699),
            UsedItem("Cort", "考特", "g", "AD810", 199, 899),
        ),
    ),
    UsedKind(
        "stroller",
        "stroller",
        "used stroller",
        "二手婴儿车",
        ("black frame", "gray fabric", "with rain cover"),
        ("黑色车架", "灰色", "送雨罩"),
        (
            "folds one-handed",
            "washed covers",
            "smoke-free home",
            "cup holder included",
            "fits in overhead bin",
            "all straps intact",
        ),
        ("一键折叠", "布套已清洗", "无烟家庭", "送杯架", "可登机", "安全带完好"),
        (
            UsedItem("Babyzen", "Babyzen", "g", "YOYO2", 499, 4490),
            UsedItem("Bugaboo", "博格步", "g", "Fox 5", 1299, 9999),
            UsedItem("Bugaboo", "博格步", "g", "Butterfly", 499, 4999),
            UsedItem("UPPAbaby", "UPPAbaby", "w", "Vista V2", 999, 7999),
            UsedItem("UPPAbaby", "UPPAbaby", "w", "Minu V2", 449, 3999),
            UsedItem("Cybex", "赛百斯", "g", "Mios", 899, 6999),
            UsedItem("Joie", "巧儿宜", "g", "Litetrax", 199, 1499),
            UsedItem("Graco", "葛莱", "w", "Modes", 299, 1999),
            UsedItem("Goodbaby", "好孩子", "c", "Pockit", 249, 1299),
            UsedItem("Chicco", "智高", "w", "Bravo", 349, 2499),
            UsedItem("Pouch", "帛琦", "c", "A18", 99, 599),
        ),
    ),
    UsedKind(
        "sofa",
        "sofa",
        "used sofa",
        "二手沙发",
        ("3-seater", "2-seater", "L-shaped"),
        ("三人位", "双人位", "L型转角"),
        (
            "no stains",
            "pet-free home",
            "covers washable",
            "must pick up",
            "fits through doors",
            "about 2 years old",
        ),
        ("无污渍", "无宠物", "沙发套可拆洗", "需自提", "好搬运", "用了两年"),
        (
            UsedItem("IKEA", "宜家", "g", "KIVIK", 799, 3999),
            UsedItem("IKEA", "宜家", "g", "FRIHETEN", 649, 2999),
            UsedItem("IKEA", "宜家", "g", "EKTORP", 549, 2799),
            UsedItem("West Elm", "West Elm", "w", "Harmony", 1999, 12000),
            UsedItem("Article", "Article", "w", "Sven", 1299, 8999),
            UsedItem("Ashley", "爱室丽", "w", "Darcy", 599, 3499),
            UsedItem("Burrow", "Burrow", "w", "Nomad", 1400, 9000),
            UsedItem("Kuka", "顾家家居", "c", "Tech Fabric Sofa", 1200, 4999, "科技布沙发"),
            UsedItem("Linshi", "林氏家居", "c", "Fabric Sofa", 600, 2499, "布艺沙发"),
            UsedItem("Quanu", "全友家居", "c", "Leather Sofa", 700, 2999, "真皮沙发"),
            UsedItem("Zinus", "际诺思", "g", "Jackie", 350, 1999),
        ),
    ),
    UsedKind(
        "headphones",
        "headphones",
        "used headphones",
        "二手耳机",
        ("black", "silver", "white"),
        ("黑色", "银色", "白色"),
        (
            "original case",
            "pads replaced",
            "noise cancelling works",
            "cable included",
            "barely worn",
            "receipt available",
        ),
        ("原装收纳盒", "已换新耳罩", "降噪正常", "送数据线", "几乎没戴", "有购买凭证"),
        (
            UsedItem("Sony", "索尼", "g", "WH-1000XM4", 349, 2299),
            UsedItem("Sony", "索尼", "g", "WF-1000XM4", 279, 1699),
            UsedItem("Apple", "苹果", "g", "AirPods Pro", 249, 1899),
            UsedItem("Apple", "苹果", "g", "AirPods Max", 549, 4399),
            UsedItem("Bose", "Bose", "w", "QC35 II", 349, 2299),
            UsedItem("Bose", "Bose", "w", "700", 399, 2999),
            UsedItem("Sennheiser", "森海塞尔", "w", "Momentum 3", 399, 2999),
            UsedItem("Beats", "Beats", "w", "Studio3", 349, 2499),
            UsedItem("Huawei", "华为", "c", "FreeBuds Pro 3", 199, 1499),
            UsedItem("Edifier", "漫步者", "c", "W820NB", 79, 399),
        ),
    ),
)
