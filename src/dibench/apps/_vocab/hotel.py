"""Hotel catalog: destinations with areas and landmarks, hotel chains by class, room types.

An English search and a Chinese search of the same query index name different but equally
typical destinations (a US/European city vs a Chinese one): a Chinese user books Hangzhou, not
San Francisco. ``CITIES_EN[i]`` and ``CITIES_ZH[i]`` pair up that way.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["BRANDS_EN", "BRANDS_ZH", "CITIES_EN", "CITIES_ZH", "CLASSES", "ROOMS", "Brand", "City"]


class City(NamedTuple):
    name: str
    landmarks: tuple[str, ...]  # what users search 'near'
    areas: tuple[str, ...]  # neighbourhoods hotels are named after
    price_factor: float  # relative room rates


class Brand(NamedTuple):
    name: str
    cls: int  # index into CLASSES
    pattern: str  # '{brand}', '{city}', '{area}' placeholders


# (en, zh): hotel class, and the room types the 'room_type' enum takes
CLASSES = (("Luxury", "豪华型"), ("Upscale", "高档型"), ("Comfort", "舒适型"), ("Budget", "经济型"))
ROOMS = (
    ("Standard King", "标准大床房"),
    ("Standard Twin", "标准双床房"),
    ("Deluxe King", "豪华大床房"),
    ("Suite", "套房"),
)
# nightly base rates per class, before the city factor
RATES_USD = ((520, 900), (240, 420), (150, 260), (85, 150))
RATES_CNY = ((1500, 3200), (650, 1300), (320, 600), (160, 300))

CITIES_EN = (
    City(
        "San Francisco",
        ("Union Square", "Fisherman's Wharf", "Moscone Center"),
        ("Union Square", "Nob Hill", "SoMa", "Financial District", "Embarcadero", "Mission Bay"),
        1.1,
    ),
    City(
        "New York",
        ("Times Square", "Central Park", "Penn Station"),
        ("Midtown", "Times Square", "Chelsea", "SoHo", "Financial District", "Upper West Side"),
        1.3,
    ),
    City(
        "Chicago",
        ("Millennium Park", "Navy Pier", "The Magnificent Mile"),
        ("The Loop", "River North", "Magnificent Mile", "West Loop", "Streeterville"),
        0.9,
    ),
    City(
        "Boston",
        ("Boston Common", "Fenway Park", "Faneuil Hall"),
        ("Back Bay", "Seaport", "Downtown", "Beacon Hill", "Cambridge"),
        1.0,
    ),
    City(
        "Seattle",
        ("Pike Place Market", "Space Needle", "Convention Center"),
        ("Downtown", "South Lake Union", "Capitol Hill", "Belltown", "Queen Anne"),
        0.95,
    ),
    City(
        "London",
        ("Covent Garden", "Hyde Park", "King's Cross"),
        ("Covent Garden", "Kensington", "Westminster", "Canary Wharf", "Shoreditch", "Paddington"),
        1.2,
    ),
    City(
        "Paris",
        ("Eiffel Tower", "Louvre Museum", "Gare de Lyon"),
        ("Opéra", "Le Marais", "Saint-Germain", "Montparnasse", "Champs-Élysées", "Bastille"),
        1.15,
    ),
    City(
        "Los Angeles",
        ("Santa Monica Pier", "Hollywood Walk of Fame", "LAX Airport"),
        ("Downtown", "Hollywood", "Santa Monica", "Beverly Hills", "West Hollywood"),
        1.0,
    ),
)
CITIES_ZH = (
    City(
        "杭州",
        ("西湖", "杭州东站", "灵隐寺"),
        ("西湖湖滨", "武林广场", "钱江新城", "滨江", "西溪", "黄龙"),
        0.9,
    ),
    City(
        "上海",
        ("外滩", "陆家嘴", "虹桥火车站"),
        ("外滩", "陆家嘴", "人民广场", "徐家汇", "静安寺", "虹桥枢纽"),
        1.2,
    ),
    City(
        "北京",
        ("天安门广场", "国贸", "北京南站"),
        ("王府井", "国贸", "三里屯", "西单", "中关村", "望京"),
        1.15,
    ),
    City(
        "成都",
        ("春熙路", "宽窄巷子", "成都东站"),
        ("春熙路", "太古里", "天府广场", "高新区", "宽窄巷子"),
        0.8,
    ),
    City(
        "西安", ("钟楼", "大雁塔", "西安北站"), ("钟楼", "大雁塔", "曲江", "小寨", "高新区"), 0.75
    ),
    City(
        "广州",
        ("广州塔", "珠江新城", "广州南站"),
        ("珠江新城", "天河体育中心", "北京路", "琶洲", "白云山"),
        0.95,
    ),
    City(
        "厦门",
        ("鼓浪屿", "中山路步行街", "厦门大学"),
        ("中山路", "曾厝垵", "环岛路", "SM城市广场", "五缘湾"),
        0.9,
    ),
    City(
        "三亚",
        ("亚龙湾", "三亚湾", "凤凰机场"),
        ("亚龙湾", "三亚湾", "大东海", "海棠湾", "三亚市区"),
        1.3,
    ),
)

BRANDS_EN = (
    Brand("Four Seasons", 0, "Four Seasons Hotel {city}"),
    Brand("Ritz-Carlton", 0, "The Ritz-Carlton, {city}"),
    Brand("St. Regis", 0, "The St. Regis {city}"),
    Brand("Park Hyatt", 0, "Park Hyatt {city}"),
    Brand("Waldorf Astoria", 0, "Waldorf Astoria {city}"),
    Brand("Mandarin Oriental", 0, "Mandarin Oriental, {city}"),
    Brand("InterContinental", 0, "InterContinental {city} {area}"),
    Brand("Marriott", 1, "{city} Marriott {area}"),
    Brand("Hilton", 1, "Hilton {city} {area}"),
    Brand("Hyatt Regency", 1, "Hyatt Regency {city} {area}"),
    Brand("Westin", 1, "The Westin {city} {area}"),
    Brand("Sheraton", 1, "Sheraton {city} {area}"),
    Brand("Kimpton", 1, "Kimpton {area} Hotel"),
    Brand("Le Méridien", 1, "Le Méridien {city} {area}"),
    Brand("Hilton Garden Inn", 2, "Hilton Garden Inn {city} {area}"),
    Brand("Courtyard", 2, "Courtyard by Marriott {city} {area}"),
    Brand("Hyatt Place", 2, "Hyatt Place {city} {area}"),
    Brand("Holiday Inn", 2, "Holiday Inn {city} {area}"),
    Brand("Hampton Inn", 2, "Hampton Inn & Suites {city} {area}"),
    Brand("DoubleTree", 2, "DoubleTree by Hilton {city} {area}"),
    Brand("Novotel", 2, "Novotel {city} {area}"),
    Brand("Best Western", 2, "Best Western Plus {area} Inn"),
    Brand("Holiday Inn Express", 3, "Holiday Inn Express {city} {area}"),
    Brand("La Quinta", 3, "La Quinta Inn {city} {area}"),
    Brand("ibis", 3, "ibis {city} {area}"),
    Brand("Motel 6", 3, "Motel 6 {city} {area}"),
    Brand("Super 8", 3, "Super 8 {city} {area}"),
    Brand("Red Roof Inn", 3, "Red Roof Inn {city} {area}"),
    Brand("Days Inn", 3, "Days Inn {city} {area}"),
)
BRANDS_ZH = (
    Brand("丽思卡尔顿", 0, "{city}{area}丽思卡尔顿酒店"),
    Brand("四季", 0, "{city}四季酒店"),
    Brand("柏悦", 0, "{city}柏悦酒店"),
    Brand("华尔道夫", 0, "{city}华尔道夫酒店"),
    Brand("文华东方", 0, "{city}文华东方酒店"),
    Brand("香格里拉", 0, "{city}{area}香格里拉大酒店"),
    Brand("洲际", 0, "{city}{area}洲际酒店"),
    Brand("万豪", 1, "{city}{area}万豪酒店"),
    Brand("希尔顿", 1, "{city}{area}希尔顿酒店"),
    Brand("凯悦", 1, "{city}{area}凯悦酒店"),
    Brand("威斯汀", 1, "{city}{area}威斯汀酒店"),
    Brand("喜来登", 1, "{city}{area}喜来登酒店"),
    Brand("亚朵", 1, "亚朵酒店({city}{area}店)"),
    Brand("开元名都", 1, "{city}{area}开元名都大酒店"),
    Brand("桔子水晶", 1, "桔子水晶酒店({city}{area}店)"),
    Brand("全季", 2, "全季酒店({city}{area}店)"),
    Brand("维也纳国际", 2, "维也纳国际酒店({city}{area}店)"),
    Brand("丽枫", 2, "丽枫酒店({city}{area}店)"),
    Brand("希尔顿欢朋", 2, "希尔顿欢朋酒店({city}{area}店)"),
    Brand("智选假日", 2, "{city}{area}智选假日酒店"),
    Brand("美居", 2, "{city}{area}美居酒店"),
    Brand("宜必思尚品", 2, "宜必思尚品酒店({city}{area}店)"),
    Brand("汉庭", 3, "汉庭酒店({city}{area}店)"),
    Brand("如家", 3, "如家酒店({city}{area}店)"),
    Brand("锦江之星", 3, "锦江之星({city}{area}店)"),
    Brand("7天", 3, "7天酒店({city}{area}店)"),
    Brand("格林豪泰", 3, "格林豪泰酒店({city}{area}店)"),
    Brand("城市便捷", 3, "城市便捷酒店({city}{area}店)"),
    Brand("宜必思", 3, "宜必思酒店({city}{area}店)"),
)
