"""Restaurant-review catalog: cuisines, invented restaurants, cities and neighbourhoods.

``CITIES_EN[i]`` and ``CITIES_ZH[i]`` pair up by query index (an English user searches San
Francisco, a Chinese user Shanghai). Average spend per person is per cuisine and language.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CITIES_EN", "CITIES_ZH", "CUISINES", "Cuisine"]


class Cuisine(NamedTuple):
    key: str
    query_en: str
    query_zh: str
    label_en: str
    label_zh: str
    spend_usd: float  # typical spend per person
    spend_cny: float
    names_en: tuple[str, ...]
    names_zh: tuple[str, ...]
    hours: tuple[int, int]  # typical opening hour and closing hour
    cover: str = ""  # dish the cover photo shows ('' = the dining room)


CITIES_EN = (
    ("San Francisco", ("Mission", "SoMa", "Hayes Valley", "North Beach", "Marina", "Inner Sunset")),
    (
        "New York",
        ("East Village", "Midtown", "Williamsburg", "Chelsea", "Upper West Side", "Flushing"),
    ),
    (
        "Chicago",
        ("West Loop", "River North", "Wicker Park", "Chinatown", "Lincoln Park", "Logan Square"),
    ),
    (
        "Los Angeles",
        ("Koreatown", "Silver Lake", "Santa Monica", "Downtown", "West Hollywood", "Pasadena"),
    ),
    ("Boston", ("Back Bay", "South End", "North End", "Cambridge", "Seaport", "Allston")),
    (
        "Seattle",
        ("Capitol Hill", "Ballard", "Fremont", "Belltown", "International District", "Queen Anne"),
    ),
)
CITIES_ZH = (
    ("上海", ("静安寺", "徐家汇", "陆家嘴", "新天地", "五角场", "中山公园")),
    ("北京", ("三里屯", "国贸", "望京", "五道口", "西单", "王府井")),
    ("成都", ("春熙路", "太古里", "玉林", "宽窄巷子", "高新区", "建设路")),
    ("广州", ("天河", "珠江新城", "北京路", "江南西", "番禺", "海珠")),
    ("杭州", ("湖滨", "武林", "滨江", "钱江新城", "西溪", "黄龙")),
    ("深圳", ("南山", "福田", "海岸城", "华强北", "东门", "前海")),
)

CUISINES = (
    Cuisine(
        "sushi",
        "sushi",
        "日料",
        "Japanese",
        "日本料理",
        45,
        180,
        (
            "Sushi Kaito",
            "Omakase Hana",
            "Tsuru Sushi Bar",
            "Blue Fin House",
            "Kinme",
            "Sakura Tei",
            "Umi Sushi & Grill",
            "Nori Counter",
            "Izakaya Ren",
        ),
        (
            "鮨·隐",
            "初音日料",
            "樱花亭日本料理",
            "海之味寿司",
            "松本寿司",
            "一期一会居酒屋",
            "蓝鳍鲜料理",
            "和风·小野",
            "禅意怀石",
        ),
        (11, 22),
        "sushi",
    ),
    Cuisine(
        "hot_pot",
        "hot pot",
        "火锅",
        "Hot Pot",
        "火锅",
        35,
        110,
        (
            "Red Cauldron Hot Pot",
            "Chengdu Hot Pot Club",
            "Mala Fire",
            "Simmer Hot Pot",
            "Golden Broth",
            "Copper Pot",
            "Steam & Spice",
            "Sichuan Ember Hot Pot",
        ),
        (
            "蜀香老火锅",
            "重庆码头火锅",
            "老灶台火锅",
            "潮汕牛肉火锅",
            "铜锅涮肉",
            "川渝江湖火锅",
            "椰子鸡火锅",
            "九宫格老火锅",
            "羊蝎子火锅",
        ),
        (11, 23),
        "hotpot",
    ),
    Cuisine(
        "brunch",
        "brunch",
        "早午餐",
        "Breakfast & Brunch",
        "早午餐",
        22,
        85,
        (
            "Sunny Side Café",
            "The Early Bird",
            "Eggs & Co.",
            "Maple & Rye",
            "Toast Society",
            "Brunch Bureau",
            "Lemon Tree Kitchen",
            "Juniper Café",
        ),
        (
            "晨光早午餐",
            "周末Brunch",
            "小麦田咖啡厨房",
            "蛋蛋食堂",
            "橙色厨房",
            "森林早午餐",
            "吐司公社",
            "日落餐桌",
        ),
        (8, 16),
        "",
    ),
    Cuisine(
        "steakhouse",
        "steakhouse",
        "牛排",
        "Steakhouse",
        "西餐牛排",
        70,
        220,
        (
            "Prime Cut Steakhouse",
            "Iron & Oak Grill",
            "The Butcher's Table",
            "Red Ember Chophouse",
            "Flint Steak Bar",
            "Hickory House",
            "Marble & Bone",
            "Stockyard Grill",
        ),
        (
            "炙烤牛排馆",
            "铁板西冷牛排",
            "橡木烤肉餐厅",
            "屠夫餐桌",
            "火石牛排",
            "谷饲牛排坊",
            "雪花牛排屋",
            "原切牛排工坊",
        ),
        (17, 22),
        "",
    ),
    Cuisine(
        "dim_sum",
        "dim sum",
        "早茶",
        "Dim Sum",
        "粤式早茶",
        28,
        90,
        (
            "Jade Dragon Dim Sum",
            "Golden Lotus Tea House",
            "Harbor Dim Sum",
            "Pearl River Kitchen",
            "Bamboo Steamer",
            "Canton Garden",
            "Lucky Star Dim Sum",
            "Red Lantern Tea House",
        ),
        (
            "莲香茶楼",
            "翠园点心",
            "广府茶居",
            "金凤酒家",
            "荔湾早茶",
            "粤港茶餐厅",
            "玉堂春茶楼",
            "星河点心",
        ),
        (8, 21),
        "dim sum",
    ),
    Cuisine(
        "korean_bbq",
        "Korean BBQ",
        "韩式烤肉",
        "Korean BBQ",
        "韩式烤肉",
        38,
        120,
        (
            "Seoul Grill House",
            "Gogi Garden",
            "K-Town BBQ",
            "Han River BBQ",
            "Charcoal Seoul",
            "Bulgogi House",
            "Hanok Grill",
            "Kimchi & Coal",
        ),
        (
            "首尔烤肉",
            "江南烤肉屋",
            "炭火韩烤",
            "明洞烤肉",
            "汉江烤肉",
            "阿里郎烤肉",
            "釜山烤肉",
            "韩宫烤肉",
        ),
        (11, 23),
        "bibimbap",
    ),
    Cuisine(
        "thai",
        "Thai food",
        "泰国菜",
        "Thai",
        "泰国菜",
        22,
        95,
        (
            "Bangkok Garden",
            "Lemongrass Thai",
            "Siam Orchid",
            "Chili & Lime",
            "Thai Basil Kitchen",
            "Golden Elephant",
            "Pad Thai Corner",
            "Krua Thai",
        ),
        (
            "曼谷小馆",
            "暹罗兰花",
            "泰香米",
            "冬阴功泰餐",
            "金象泰国菜",
            "清迈小厨",
            "椰林泰式餐厅",
            "芒果树泰餐",
        ),
        (11, 22),
        "curry",
    ),
    Cuisine(
        "sichuan",
        "Sichuan food",
        "川菜",
        "Sichuan",
        "川菜",
        25,
        75,
        (
            "Spice Bridge",
            "Mapo Kitchen",
            "Peppercorn House",
            "Red Chili Garden",
            "Kung Pao Kitchen",
            "Twin Peppers",
            "Szechuan Garden",
            "Chili House",
        ),
        ("川味坊", "蜀香居", "巴蜀人家", "麻辣江湖", "川渝小馆", "椒香府", "老成都川菜", "辣府"),
        (11, 22),
        "rice",
    ),
)
