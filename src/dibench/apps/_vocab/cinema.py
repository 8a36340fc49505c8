"""Cinema catalog: invented films (English and Chinese release titles), cinema chains, places.

Film titles are made up for DIBench; chain names are ordinary cinema brands, and each cinema is
a chain plus a place, like '{chain} {place} 16' or '万达影城(徐家汇店)'.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CHAINS_EN", "CHAINS_ZH", "FORMATS", "MOVIES", "PLACES_EN", "PLACES_ZH", "Movie"]


class Movie(NamedTuple):
    title_en: str
    title_zh: str
    label_en: str  # what fits on a poster
    label_zh: str
    minutes: int
    genre_en: str
    genre_zh: str
    score: float  # audience score on a 5-point scale


MOVIES = (
    Movie("The Last Lighthouse", "最后的灯塔", "LIGHTHOUSE", "灯塔", 128, "Drama", "剧情", 4.6),
    Movie("Midnight Circuit", "午夜回路", "CIRCUIT", "午夜回路", 141, "Sci-Fi", "科幻", 4.3),
    Movie("Paper Tigers", "纸老虎", "PAPER TIGERS", "纸老虎", 104, "Comedy", "喜剧", 4.0),
    Movie("Echoes of the Valley", "山谷回声", "ECHOES", "山谷回声", 117, "Drama", "剧情", 4.4),
    Movie("Iron Meridian", "钢铁子午线", "MERIDIAN", "子午线", 136, "Action", "动作", 4.1),
    Movie("The Quiet Orbit", "静默轨道", "ORBIT", "静默轨道", 124, "Sci-Fi", "科幻", 4.5),
    Movie("Small Hours", "凌晨时分", "SMALL HOURS", "凌晨", 109, "Thriller", "惊悚", 3.9),
    Movie("Harbor Lights", "港湾灯火", "HARBOR", "港湾灯火", 112, "Romance", "爱情", 4.2),
    Movie(
        "The Clockmaker's Daughter",
        "钟表匠的女儿",
        "CLOCKMAKER",
        "钟表匠",
        131,
        "Fantasy",
        "奇幻",
        4.7,
    ),
    Movie("Runaway Summer", "逃离夏天", "RUNAWAY", "逃离夏天", 98, "Comedy", "喜剧", 3.8),
    Movie("Frostline", "冰封线", "FROSTLINE", "冰封线", 127, "Action", "动作", 4.2),
    Movie(
        "Beneath the Salt Flats", "盐湖之下", "SALT FLATS", "盐湖之下", 118, "Mystery", "悬疑", 4.4
    ),
    Movie(
        "A Map of Small Things",
        "微小事物地图",
        "SMALL THINGS",
        "微小地图",
        95,
        "Animation",
        "动画",
        4.8,
    ),
    Movie("Kingdom of Kites", "风筝王国", "KITES", "风筝王国", 101, "Animation", "动画", 4.5),
    Movie("Dust and Thunder", "尘与雷", "DUST", "尘与雷", 133, "Western", "西部", 4.0),
    Movie(
        "The Ninth Passenger",
        "第九位乘客",
        "9TH PASSENGER",
        "第九乘客",
        114,
        "Thriller",
        "惊悚",
        4.3,
    ),
    Movie(
        "Blue Hour Detective", "蓝调时刻侦探", "BLUE HOUR", "蓝调侦探", 121, "Mystery", "悬疑", 4.1
    ),
    Movie("Stargazer Academy", "观星学院", "STARGAZER", "观星学院", 106, "Family", "家庭", 4.2),
    Movie("Red River Crossing", "红河渡口", "RED RIVER", "红河渡口", 145, "War", "战争", 4.6),
    Movie("Neon Dragon", "霓虹之龙", "NEON DRAGON", "霓虹之龙", 119, "Action", "动作", 3.9),
    Movie("The Long Way Home", "回家的路", "HOME", "回家的路", 125, "Drama", "剧情", 4.5),
    Movie("Wild Mountain Tea", "野山茶", "MOUNTAIN TEA", "野山茶", 108, "Drama", "剧情", 4.3),
    Movie("Zero Gravity Protocol", "零重力协议", "ZERO G", "零重力", 138, "Sci-Fi", "科幻", 4.0),
    Movie("My Neighbor's Garden", "邻居的花园", "GARDEN", "邻居花园", 100, "Comedy", "喜剧", 4.1),
    Movie("Ghost Light Theater", "幽灵剧院", "GHOST LIGHT", "幽灵剧院", 103, "Horror", "恐怖", 3.7),
    Movie("The Tide Keeper", "守潮人", "TIDE KEEPER", "守潮人", 129, "Adventure", "冒险", 4.4),
    Movie("Lantern Night", "元宵灯会", "LANTERN", "灯会", 97, "Family", "家庭", 4.0),
    Movie("Operation Nightjar", "夜鹰行动", "NIGHTJAR", "夜鹰行动", 126, "Action", "动作", 4.2),
)

# (en, zh) projection formats: the 'format' enum, with a base ticket price (USD, CNY)
FORMATS = (
    (("2D", "2D"), 14.0, 39.0),
    (("3D", "3D"), 17.0, 45.0),
    (("IMAX", "IMAX"), 21.0, 75.0),
    (("Dolby Cinema", "杜比影院"), 20.0, 70.0),
)

# chain name and how one of its cinemas is named; {place} from PLACES_*
CHAINS_EN = (
    ("AMC", "AMC {place} 16"),
    ("Regal", "Regal {place}"),
    ("Cinemark", "Cinemark {place} XD"),
    ("Alamo Drafthouse", "Alamo Drafthouse {place}"),
    ("Landmark", "Landmark Theatres {place}"),
    ("Marcus", "Marcus {place} Cinema"),
    ("Harkins", "Harkins {place} 14"),
    ("Showcase", "Showcase Cinemas {place}"),
    ("Cineplex", "Cineplex {place}"),
    ("Studio Movie Grill", "Studio Movie Grill {place}"),
    ("iPic", "iPic {place}"),
    ("Angelika", "Angelika Film Center {place}"),
    ("Century", "Century {place} 12"),
    ("Odeon", "Odeon {place}"),
    ("Vue", "Vue {place}"),
)
CHAINS_ZH = (
    ("万达影城", "万达影城({place}店)"),
    ("CGV影城", "CGV影城({place}店)"),
    ("博纳国际影城", "博纳国际影城({place}店)"),
    ("大地影院", "大地影院({place}店)"),
    ("金逸影城", "金逸影城({place}店)"),
    ("横店电影城", "横店电影城({place}店)"),
    ("卢米埃影城", "卢米埃影城({place}店)"),
    ("UME国际影城", "UME国际影城({place}店)"),
    ("百老汇影城", "百老汇影城({place}店)"),
    ("上影国际影城", "上影国际影城({place}店)"),
    ("中影国际影城", "中影国际影城({place}店)"),
    ("幸福蓝海影城", "幸福蓝海影城({place}店)"),
    ("保利国际影城", "保利国际影城({place}店)"),
    ("星轶影城", "星轶影城({place}店)"),
    ("太平洋电影城", "太平洋电影城({place}店)"),
)
PLACES_EN = (
    "Metreon",
    "Kabuki",
    "Bay Street",
    "Union Square",
    "Lincoln Square",
    "Kips Bay",
    "Century City",
    "Santa Monica",
    "Riverside",
    "Downtown",
    "Eastgate",
    "Valley Fair",
    "Hillcrest",
    "Lakeside",
    "Northpoint",
    "Emeryville",
    "Stonestown",
)
PLACES_ZH = (
    "五角场万达广场",
    "徐家汇",
    "静安大悦城",
    "陆家嘴",
    "七宝万科",
    "虹桥天地",
    "正大广场",
    "环球港",
    "莘庄龙之梦",
    "前滩太古里",
    "长风大悦城",
    "新天地",
    "中山公园",
    "南京东路",
    "世纪汇",
    "大宁",
)
