"""A fixed set of Russian and English pages and the judged queries over them.

Written for these tests (no outside text). Every query uses other word forms
than its page (cases, plurals, ё/е, verb forms), and most have distractors:
pages that mention the words only in passing, or only some of them. The
``IRREGULAR`` pages and queries are word forms a stemmer cannot join ("кошек"
and "кошка": Snowball's "кошек" and "кошк"; "люди" and "человек"; "шёл" and
"идти"), which the dictionary's lemmas do.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

T = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

#: (path, title, text, kind, days before T it was published; None = undated)
PAGES: list[tuple[str, str, str, str, int | None]] = [
    (
        "ru/most",
        "В Москве открыли новый мост",
        "Пешеходный мост через Москву-реку соединил два парка. Мосты такого типа строят из стали и стекла.",
        "news",
        2,
    ),
    (
        "ru/most-remont",
        "Ремонт дорог летом",
        "Дорожники чинят асфальт на окраинах; у моста на Садовом работы начнутся позже.",
        "news",
        40,
    ),
    (
        "ru/metro",
        "Метро Москвы продлили на север",
        "Московский метрополитен открыл три новые станции. Поезда метро ходят каждые две минуты.",
        "news",
        5,
    ),
    (
        "ru/borsch",
        "Как сварить борщ: рецепт",
        "Рецепты борща различаются: свёкла, капуста, говядина. Борщ подают со сметаной.",
        "article",
        None,
    ),
    (
        "ru/bliny",
        "Блины на Масленицу",
        "Тонкие блины пекут на молоке; блинов на праздник пекут много.",
        "article",
        None,
    ),
    (
        "ru/elka",
        "Главную ёлку страны привезли в Кремль",
        "Ёлку высотой 27 метров срубили в Подмосковье. Ёлки для дворов привезут позже.",
        "news",
        1,
    ),
    (
        "ru/pogoda",
        "Погода на выходные: дожди и ветер",
        "В субботу и воскресенье синоптики обещают дожди; на выходных похолодает.",
        "news",
        3,
    ),
    (
        "ru/football",
        "Футбол: матч Спартака и ЦСКА закончился вничью",
        "Футбольный клуб Спартак сыграл вничью; в матче забили два гола.",
        "news",
        4,
    ),
    (
        "ru/raketa",
        "Ракету запустили с космодрома Восточный",
        "Запуск ракеты прошёл штатно, спутник выведен на орбиту.",
        "news",
        6,
    ),
    (
        "ru/zoo",
        "В зоопарке показали слонов",
        "Слоны переехали в новый вольер; слониха и слонёнок гуляют вместе.",
        "news",
        8,
    ),
    (
        "ru/phone",
        "Смартфон Галактика 128 ГБ",
        "Смартфоны Галактика: экран 6,1 дюйма, камера 50 Мп. Цена 39 990 ₽.",
        "product",
        None,
    ),
    (
        "ru/fridge",
        "Холодильник Полюс двухкамерный",
        "Купите холодильник Полюс: 300 литров, No Frost. Цена 45 500 ₽, доставка по Москве.",
        "product",
        None,
    ),
    (
        "ru/traffic",
        "Пробки на МКАД достигли девяти баллов",
        "Пробка растянулась на десять километров, водители стоят час.",
        "news",
        1,
    ),
    (
        "ru/square",
        "На Красной площади открылась ярмарка",
        "Ярмарка на Красной площади продлится до марта; катки откроются в декабре.",
        "news",
        7,
    ),
    ("ru/elections", "Выборы мэра назначили на сентябрь", "Мэра города выберут в единый день голосования.", "news", 30),
    (
        "ru/library",
        "Библиотеку на Арбате открыли после ремонта",
        "В библиотеке появились читальные залы и книги на английском.",
        "news",
        12,
    ),
    (
        "ru/snow",
        "Снегопад парализовал движение",
        "Снегопады продолжатся три дня; коммунальные службы убирают снег круглосуточно.",
        "news",
        2,
    ),
    (
        "ru/park",
        "Парк Горького летом",
        "В парке работают прокаты и кафе; через реку виден новый мост.",
        "article",
        None,
    ),
    (
        "en/bridge",
        "Old bridge reopens after repairs",
        "The stone bridge over the river reopened; bridges of this age need constant care.",
        "news",
        3,
    ),
    (
        "en/bridge-cards",
        "Card games for winter evenings",
        "Poker, bridge and gin rummy are popular at the club.",
        "article",
        None,
    ),
    (
        "en/aurora",
        "Northern lights seen over the bay",
        "The northern lights lit up the sky; aurora watchers gathered on the pier.",
        "news",
        2,
    ),
    (
        "en/marathon",
        "City marathon draws record number of runners",
        "Runners crossed the finish line in the rain; running clubs cheered.",
        "news",
        9,
    ),
    (
        "en/pancakes",
        "The simplest pancake recipe",
        "Pancakes need flour, milk and eggs; recipes vary by country.",
        "article",
        None,
    ),
    (
        "en/rocket",
        "Rocket launched from the coast at dawn",
        "The launch of the rocket was delayed twice by wind.",
        "news",
        5,
    ),
    ("en/zoo", "Elephants arrive at the city zoo", "Two elephants settled into the new enclosure.", "news", 11),
    (
        "en/laptop",
        "Laptop Aero 14 with 16 GB memory",
        "Laptops of the Aero series weigh 1.2 kg. Price 89 990 roubles.",
        "product",
        None,
    ),
    (
        "en/climate",
        "Climate change hits northern farms",
        "Changing climate shortens winters; farmers change crops.",
        "news",
        20,
    ),
    ("en/library", "Library lends e-books for free", "The library's books can now be borrowed online.", "news", 14),
    ("en/football", "Football club wins the cup", "The football club beat its rival in the final.", "news", 4),
    (
        "en/museum",
        "Museum opens two new exhibitions",
        "Exhibitions of maps and photographs open at the museum this week.",
        "news",
        6,
    ),
    ("en/subway", "Subway line gets three stations", "New subway stations open on the eastern line.", "news", 10),
    ("en/snow", "Snowstorm closes schools", "The snowstorm dropped a foot of snow overnight.", "news", 1),
    ("en/weather", "Weekend weather: rain and wind", "Rain is expected on Saturday, with wind on Sunday.", "news", 3),
]

#: pages whose words a query finds only in an irregular form (the module docstring)
IRREGULAR_PAGES: list[tuple[str, str, str, str, int | None]] = [
    (
        "ru/koshka",
        "Кошка Мурка нашла дом",
        "Бездомная кошка прожила зиму в подвале, теперь у неё есть хозяйка.",
        "news",
        3,
    ),
    ("ru/den", "День города: салют и концерт", "Праздничный день завершится салютом над рекой.", "news", 1),
    ("ru/otec", "Отец и сын построили лодку", "Отец учил сына работать с деревом всё лето.", "article", None),
    (
        "ru/druzya",
        "Школьные друзья встретились спустя двадцать лет",
        "Друзья детства собрались в старом дворе.",
        "news",
        5,
    ),
    ("ru/lyudi", "Люди вышли на субботник", "Сотни людей убирали парки и дворы в выходные.", "news", 2),
    ("ru/shel", "Шёл снег, и мы шли пешком", "Автобусы не ходили, до работы шли через поле.", "article", None),
    ("ru/deti", "Дети вернулись в школы", "Первого сентября дети пошли в новые классы.", "news", 4),
    (
        "ru/luchshe",
        "Что лучше на завтрак: каша или омлет",
        "Диетологи считают, что каша лучше насыщает.",
        "article",
        None,
    ),
    ("ru/let", "Театру исполнилось сто лет", "Юбилей театра отметили премьерой спектакля.", "news", 6),
    ("ru/mat", "Подарки для матери к празднику", "Что подарить маме и бабушке в марте.", "article", None),
    ("ru/son", "Сна не хватает каждому третьему", "Врачи советуют спать восемь часов.", "news", 9),
    ("ru/led", "Рыбаков сняли со льда", "Спасатели предупреждают: выходить на реку опасно.", "news", 1),
    ("ru/vremya", "Времени на отдых стало больше", "Рабочую неделю сократили до четырёх дней.", "news", 7),
    ("ru/doch", "Дочери подарили щенка", "Щенок породы корги теперь живёт в квартире.", "article", None),
    ("ru/cerkov", "В церкви отреставрировали фрески", "Реставраторы работали над росписью три года.", "news", 12),
    ("ru/imya", "Улице вернули прежнее имя", "Жители выбрали имя на голосовании.", "news", 8),
    ("ru/orel", "Орла выпустили на волю", "Птицу лечили в центре реабилитации.", "news", 3),
]
PAGES += IRREGULAR_PAGES

#: (query, the page that must be in the top 3)
JUDGED: list[tuple[str, str]] = [
    ("мост", "ru/most"),
    ("мостами", "ru/most"),
    ("московское метро", "ru/metro"),
    ("рецепт борща", "ru/borsch"),
    ("блинов", "ru/bliny"),
    ("ёлка", "ru/elka"),
    ("елки", "ru/elka"),
    ("погода выходные", "ru/pogoda"),
    ("футбольный матч", "ru/football"),
    ("запуск ракеты", "ru/raketa"),
    ("слоны", "ru/zoo"),
    ("смартфон", "ru/phone"),
    ("купить холодильник", "ru/fridge"),
    ("пробк*", "ru/traffic"),
    ('"красная площадь"', "ru/square"),
    ("выборы мэра", "ru/elections"),
    ("библиотеки", "ru/library"),
    ("снегопады", "ru/snow"),
    ("bridges", "en/bridge"),
    ("northern lights", "en/aurora"),
    ("marathon runners", "en/marathon"),
    ("pancake recipes", "en/pancakes"),
    ("rocket launches", "en/rocket"),
    ("elephant", "en/zoo"),
    ("laptops", "en/laptop"),
    ("climate changes", "en/climate"),
    ("library book", "en/library"),
    ("football", "en/football"),
    ("museum exhibition", "en/museum"),
    ("subway station", "en/subway"),
    ("snowstorms", "en/snow"),
    ("weather weekend", "en/weather"),
]

#: (query, page) for the irregular forms: each pair is one a stemmer misses
IRREGULAR: list[tuple[str, str]] = [
    ("кошек", "ru/koshka"),
    ("дня города", "ru/den"),
    ("отца", "ru/otec"),
    ("друг детства", "ru/druzya"),
    ("человек", "ru/lyudi"),
    ("идти пешком", "ru/shel"),
    ("ребёнок школа", "ru/deti"),
    ("хороший завтрак", "ru/luchshe"),
    ("театр год", "ru/let"),
    ("мать", "ru/mat"),
    ("сон", "ru/son"),
    ("лёд", "ru/led"),
    ("время отдыха", "ru/vremya"),
    ("дочь", "ru/doch"),
    ("церковь", "ru/cerkov"),
    ("имени улицы", "ru/imya"),
    ("орёл", "ru/orel"),
    # an ambiguous form counts under every lemma: "стали" is "стать" and "сталь"
    ("сталь", "ru/most"),
    # a phrase of other forms of its words
    ('"красную площадь"', "ru/square"),
]
JUDGED += IRREGULAR


def url_of(path: str) -> str:
    host = "ru.example" if path.startswith("ru/") else "en.example"
    return f"https://{host}/{path}"


def published(days: int | None) -> datetime | None:
    return None if days is None else T - timedelta(days=days)
