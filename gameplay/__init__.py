"""Game engine adapter, search and advice. Built by the game-advice issue."""
