"""Set names for the sets that the 17Lands card lists give only by code.

The MTGJSON set files name their own sets and a stored name always wins; for the 17Lands sets the data
has codes alone, so their names are written here by hand. A code missing here (a bonus sheet nobody
named) stays a bare code.
"""
from __future__ import annotations

SET_NAMES = {
    "AFR": "Adventures in the Forgotten Realms",
    "AKR": "Amonkhet Remastered",
    "BIG": "The Big Score",
    "BLB": "Bloomburrow",
    "BRO": "The Brothers' War",
    "BRR": "The Brothers' War Retro Artifacts",
    "DFT": "Aetherdrift",
    "DMU": "Dominaria United",
    "DOM": "Dominaria",
    "DSK": "Duskmourn: House of Horror",
    "ECL": "Lorwyn Eclipsed",
    "ELD": "Throne of Eldraine",
    "EOE": "Edge of Eternities",
    "EOS": "Edge of Eternities: Stellar Sights",
    "FCA": "Final Fantasy: Through the Ages",
    "FDN": "Foundations",
    "FIN": "Final Fantasy",
    "GRN": "Guilds of Ravnica",
    "HBG": "Alchemy Horizons: Baldur's Gate",
    "IKO": "Ikoria: Lair of Behemoths",
    "J21": "Jumpstart: Historic Horizons",
    "JMP": "Jumpstart",
    "KHM": "Kaldheim",
    "KLR": "Kaladesh Remastered",
    "KTK": "Khans of Tarkir",
    "LCI": "The Lost Caverns of Ixalan",
    "LRW": "Lorwyn",
    "LTR": "The Lord of the Rings: Tales of Middle-earth",
    "M19": "Core Set 2019",
    "M20": "Core Set 2020",
    "M21": "Core Set 2021",
    "MAT": "March of the Machine: The Aftermath",
    "MH1": "Modern Horizons",
    "MH2": "Modern Horizons 2",
    "MH3": "Modern Horizons 3",
    "MID": "Innistrad: Midnight Hunt",
    "MKM": "Murders at Karlov Manor",
    "MOM": "March of the Machine",
    "MSH": "Marvel Super Heroes",
    "MUL": "Multiverse Legends",
    "NEO": "Kamigawa: Neon Dynasty",
    "OM1": "Through the Omenpaths",
    "ONE": "Phyrexia: All Will Be One",
    "OTJ": "Outlaws of Thunder Junction",
    "OTP": "Breaking News",
    "PIO": "Pioneer Masters",
    "RIX": "Rivals of Ixalan",
    "RNA": "Ravnica Allegiance",
    "SHM": "Shadowmoor",
    "SIR": "Shadows over Innistrad Remastered",
    "SIS": "Shadows of the Past",
    "SNC": "Streets of New Capenna",
    "SOS": "Secrets of Strixhaven",
    "SPG": "Special Guests",
    "SPM": "Marvel's Spider-Man",
    "STA": "Strixhaven Mystical Archive",
    "STX": "Strixhaven: School of Mages",
    "TDM": "Tarkir: Dragonstorm",
    "THB": "Theros Beyond Death",
    "TLA": "Avatar: The Last Airbender",
    "TLE": "Avatar: The Last Airbender Eternal",
    "TMT": "Teenage Mutant Ninja Turtles",
    "VMA": "Vintage Masters",
    "VOW": "Innistrad: Crimson Vow",
    "WAR": "War of the Spark",
    "WOE": "Wilds of Eldraine",
    "WOT": "Wilds of Eldraine: Enchanting Tales",
    "XLN": "Ixalan",
    "Y22": "Alchemy 2022",
    "Y23": "Alchemy 2023",
    "Y24": "Alchemy 2024",
    "Y25": "Alchemy 2025",
    "Y26": "Alchemy 2026",
    "ZNR": "Zendikar Rising",
}


def set_name(code: str, stored: str = "") -> str:
    """The set's name: the stored one (unless it is only the code), else this table's, else empty."""
    code = (code or "").upper()
    return stored if stored and stored.upper() != code else SET_NAMES.get(code, "")


def set_label(code: str, stored: str = "") -> str:
    """How a set is offered in a list: 'Bloomburrow (BLB)', or the bare code when nobody named it."""
    name = set_name(code, stored)
    return f"{name} ({code})" if name else code
