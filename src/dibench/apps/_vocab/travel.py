"""Flight and train catalogs: routes, carriers/operators, aircraft, stations and fares.

Routes come in pairs: ``FLIGHT_ROUTES_EN[i]`` and ``FLIGHT_ROUTES_ZH[i]`` (likewise for trains)
are what an English and a Chinese user would typically search with the same query index, so
each language gets its own airports, carriers and currency.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "AIRCRAFT",
    "AIRLINES",
    "AIRPORTS_ZH",
    "BUDGET_AIRLINES",
    "CABINS",
    "FLIGHT_ROUTES_EN",
    "FLIGHT_ROUTES_ZH",
    "SEATS_EN",
    "SEATS_ZH",
    "TRAIN_ROUTES_EN",
    "TRAIN_ROUTES_ZH",
    "FlightRoute",
    "Service",
    "TrainRoute",
]


class FlightRoute(NamedTuple):
    origin: str  # IATA code
    origin_city: str
    dest: str
    dest_city: str
    minutes: int  # typical nonstop block time
    fare: float  # typical one-way economy fare (USD or CNY)
    carriers: tuple[str, ...]  # IATA airline codes flying it


class Service(NamedTuple):
    operator: str  # the 'brand' users name ('ICE', 'Eurostar', '高铁')
    code: str  # train-number prefix ('ICE ', 'ES ', 'G')
    first: int  # train numbers drawn from [first, last]
    last: int
    minutes: int  # typical run time
    fare: float  # standard/second-class fare


class TrainRoute(NamedTuple):
    origin_city: str
    dest_city: str
    origins: tuple[str, ...]  # stations, most used first
    dests: tuple[str, ...]
    services: tuple[Service, ...]


# code -> (English name, Chinese name)
AIRLINES: dict[str, tuple[str, str]] = {
    "UA": ("United", "美联航"),
    "DL": ("Delta", "达美航空"),
    "AA": ("American", "美国航空"),
    "AS": ("Alaska", "阿拉斯加航空"),
    "B6": ("JetBlue", "捷蓝航空"),
    "WN": ("Southwest", "西南航空"),
    "NK": ("Spirit", "精神航空"),
    "F9": ("Frontier", "边疆航空"),
    "HA": ("Hawaiian", "夏威夷航空"),
    "BA": ("British Airways", "英国航空"),
    "VS": ("Virgin Atlantic", "维珍航空"),
    "AF": ("Air France", "法国航空"),
    "U2": ("easyJet", "易捷航空"),
    "CA": ("Air China", "中国国航"),
    "MU": ("China Eastern", "东方航空"),
    "CZ": ("China Southern", "南方航空"),
    "HU": ("Hainan Airlines", "海南航空"),
    "MF": ("Xiamen Airlines", "厦门航空"),
    "3U": ("Sichuan Airlines", "四川航空"),
    "ZH": ("Shenzhen Airlines", "深圳航空"),
    "FM": ("Shanghai Airlines", "上海航空"),
    "HO": ("Juneyao Air", "吉祥航空"),
    "9C": ("Spring Airlines", "春秋航空"),
    "SC": ("Shandong Airlines", "山东航空"),
    "8L": ("Lucky Air", "祥鹏航空"),
    "JD": ("Capital Airlines", "首都航空"),
    "EU": ("Chengdu Airlines", "成都航空"),
    "PN": ("West Air", "西部航空"),
    "GS": ("Tianjin Airlines", "天津航空"),
}
BUDGET_AIRLINES = frozenset({"NK", "F9", "U2", "9C", "PN", "8L"})

# (en, zh) cabins: the 'cabin' enum
CABINS = (("Economy", "经济舱"), ("Premium Economy", "超级经济舱"), ("Business", "公务舱"))

# (narrow-body, wide-body) aircraft names per language
AIRCRAFT = {
    "en": (
        (
            "Boeing 737-800",
            "Boeing 737 MAX 8",
            "Airbus A320neo",
            "Airbus A321neo",
            "Airbus A220-300",
            "Embraer 175",
        ),
        ("Boeing 787-9", "Boeing 777-200ER", "Airbus A330-900", "Airbus A350-1000"),
    ),
    "zh": (
        ("波音737", "波音737 MAX", "空客A320", "空客A321", "国产C919", "空客A320neo"),
        ("空客A330", "波音787", "空客A350", "波音777"),
    ),
}

FLIGHT_ROUTES_EN = (
    FlightRoute(
        "JFK", "New York", "LAX", "Los Angeles", 380, 260, ("UA", "DL", "AA", "B6", "AS", "NK")
    ),
    FlightRoute("SFO", "San Francisco", "SEA", "Seattle", 125, 140, ("AS", "UA", "DL", "WN", "F9")),
    FlightRoute("ORD", "Chicago", "DFW", "Dallas", 155, 170, ("AA", "UA", "NK", "F9", "WN")),
    FlightRoute("BOS", "Boston", "MIA", "Miami", 205, 190, ("AA", "B6", "DL", "NK", "UA")),
    FlightRoute("ATL", "Atlanta", "DEN", "Denver", 200, 180, ("DL", "UA", "F9", "WN", "NK")),
    FlightRoute(
        "LAX", "Los Angeles", "LAS", "Las Vegas", 70, 95, ("WN", "DL", "AA", "UA", "NK", "F9")
    ),
    FlightRoute("SEA", "Seattle", "DEN", "Denver", 165, 150, ("AS", "UA", "WN", "F9", "DL")),
    FlightRoute("JFK", "New York", "LHR", "London", 415, 620, ("BA", "VS", "AA", "DL", "UA")),
    FlightRoute("SFO", "San Francisco", "HNL", "Honolulu", 335, 380, ("HA", "UA", "AS", "WN")),
    FlightRoute("LHR", "London", "CDG", "Paris", 80, 120, ("BA", "AF", "U2")),
)
FLIGHT_ROUTES_ZH = (
    FlightRoute("SHA", "上海", "PEK", "北京", 135, 950, ("MU", "CA", "FM", "HO", "HU")),
    FlightRoute("CAN", "广州", "PVG", "上海", 140, 980, ("CZ", "MU", "FM", "HO", "9C")),
    FlightRoute("PEK", "北京", "CTU", "成都", 190, 1250, ("CA", "3U", "MU", "HU", "EU")),
    FlightRoute("SZX", "深圳", "XIY", "西安", 165, 1050, ("ZH", "CZ", "MU", "HU", "JD")),
    FlightRoute("HGH", "杭州", "CKG", "重庆", 150, 880, ("CA", "MU", "HO", "3U", "PN")),
    FlightRoute("PVG", "上海", "SYX", "三亚", 200, 1300, ("MU", "HO", "9C", "HU", "CZ")),
    FlightRoute("CAN", "广州", "KMG", "昆明", 140, 800, ("CZ", "8L", "MU", "3U")),
    FlightRoute("PEK", "北京", "SZX", "深圳", 205, 1400, ("CA", "ZH", "CZ", "HU", "GS")),
    FlightRoute("SHA", "上海", "XMN", "厦门", 95, 700, ("MF", "MU", "FM", "HO")),
    FlightRoute("TSN", "天津", "CGO", "郑州", 100, 600, ("GS", "SC", "CA", "9C")),
)
# Chinese names of the airports above, as Chinese apps print them
AIRPORTS_ZH = {
    "SHA": "虹桥T2",
    "PEK": "首都T3",
    "CAN": "白云T2",
    "PVG": "浦东T1",
    "CTU": "双流T2",
    "SZX": "宝安T3",
    "XIY": "咸阳T3",
    "HGH": "萧山T4",
    "CKG": "江北T3",
    "SYX": "凤凰T2",
    "KMG": "长水",
    "XMN": "高崎T3",
    "TSN": "滨海T2",
    "CGO": "新郑T2",
}

SEATS_EN = ("Standard", "First Class", "Business")
SEATS_ZH = ("二等座", "一等座", "商务座", "硬座")

TRAIN_ROUTES_EN = (
    TrainRoute(
        "London",
        "Paris",
        ("London St Pancras",),
        ("Paris Gare du Nord",),
        (Service("Eurostar", "ES ", 9002, 9059, 138, 95),),
    ),
    TrainRoute(
        "Paris",
        "Lyon",
        ("Paris Gare de Lyon", "Paris Bercy"),
        ("Lyon Part-Dieu", "Lyon Perrache"),
        (
            Service("TGV INOUI", "TGV ", 6601, 6699, 117, 75),
            Service("OUIGO", "OUIGO ", 7801, 7869, 125, 35),
            Service("Frecciarossa", "FR ", 9241, 9289, 121, 55),
        ),
    ),
    TrainRoute(
        "Berlin",
        "Munich",
        ("Berlin Hbf", "Berlin Südkreuz"),
        ("München Hbf", "München-Pasing"),
        (
            Service("ICE", "ICE ", 501, 599, 245, 95),
            Service("ICE Sprinter", "ICE ", 1001, 1099, 235, 115),
            Service("Intercity", "IC ", 2201, 2299, 370, 55),
        ),
    ),
    TrainRoute(
        "Milan",
        "Rome",
        ("Milano Centrale", "Milano Rogoredo"),
        ("Roma Termini", "Roma Tiburtina"),
        (
            Service("Frecciarossa", "FR ", 9501, 9599, 182, 85),
            Service("Italo", "ITA ", 8901, 8999, 188, 70),
            Service("Intercity", "IC ", 501, 599, 400, 45),
        ),
    ),
    TrainRoute(
        "Madrid",
        "Barcelona",
        ("Madrid Puerta de Atocha", "Madrid Chamartín"),
        ("Barcelona Sants",),
        (
            Service("AVE", "AVE ", 3101, 3199, 155, 80),
            Service("iryo", "IRYO ", 6201, 6299, 165, 50),
            Service("OUIGO", "OUIGO ", 6401, 6499, 170, 30),
            Service("Avlo", "AVLO ", 6001, 6099, 168, 35),
        ),
    ),
    TrainRoute(
        "New York",
        "Boston",
        ("New York Penn Station",),
        ("Boston South Station", "Boston Back Bay"),
        (
            Service("Acela", "Acela ", 2150, 2199, 215, 140),
            Service("Northeast Regional", "Regional ", 160, 199, 255, 75),
        ),
    ),
    TrainRoute(
        "Amsterdam",
        "Brussels",
        ("Amsterdam Centraal", "Schiphol Airport"),
        ("Brussels-Midi",),
        (
            Service("Eurostar", "ES ", 9301, 9399, 112, 60),
            Service("Intercity", "IC ", 9201, 9299, 170, 35),
        ),
    ),
    TrainRoute(
        "Washington",
        "New York",
        ("Washington Union Station",),
        ("New York Penn Station",),
        (
            Service("Acela", "Acela ", 2100, 2149, 176, 160),
            Service("Northeast Regional", "Regional ", 100, 159, 205, 60),
        ),
    ),
)
TRAIN_ROUTES_ZH = (
    TrainRoute(
        "上海", "北京", ("上海虹桥", "上海"), ("北京南",), (Service("高铁", "G", 1, 160, 300, 553),)
    ),
    TrainRoute(
        "上海",
        "杭州",
        ("上海虹桥", "上海南"),
        ("杭州东", "杭州"),
        (
            Service("高铁", "G", 7301, 7399, 52, 73),
            Service("动车", "D", 3101, 3199, 78, 49),
            Service("普快", "K", 1101, 1199, 125, 24.5),
        ),
    ),
    TrainRoute(
        "北京",
        "天津",
        ("北京南",),
        ("天津", "天津西"),
        (
            Service("城际", "C", 2001, 2099, 33, 54.5),
            Service("高铁", "G", 301, 399, 36, 54.5),
            Service("普快", "K", 1001, 1099, 95, 15.5),
        ),
    ),
    TrainRoute(
        "广州",
        "深圳",
        ("广州南", "广州东"),
        ("深圳北", "深圳"),
        (
            Service("高铁", "G", 6001, 6099, 36, 74.5),
            Service("城际", "C", 7001, 7099, 75, 79.5),
            Service("动车", "D", 7101, 7199, 62, 79.5),
        ),
    ),
    TrainRoute(
        "成都",
        "重庆",
        ("成都东",),
        ("重庆北", "重庆西"),
        (
            Service("高铁", "G", 8501, 8599, 66, 154),
            Service("动车", "D", 6101, 6199, 92, 96),
            Service("城际", "C", 6001, 6099, 85, 96),
        ),
    ),
    TrainRoute(
        "北京",
        "西安",
        ("北京西",),
        ("西安北",),
        (Service("高铁", "G", 651, 699, 275, 515), Service("高铁", "G", 87, 99, 265, 515)),
    ),
    TrainRoute(
        "南京",
        "上海",
        ("南京南", "南京"),
        ("上海虹桥", "上海"),
        (
            Service("高铁", "G", 7001, 7099, 72, 139.5),
            Service("动车", "D", 3001, 3099, 112, 94.5),
            Service("普快", "K", 1501, 1599, 205, 46.5),
        ),
    ),
    TrainRoute(
        "武汉",
        "长沙",
        ("武汉", "汉口"),
        ("长沙南",),
        (Service("高铁", "G", 1101, 1199, 82, 164), Service("动车", "D", 5101, 5199, 118, 108)),
    ),
)
