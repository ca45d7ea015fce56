"""The rules engine behind one interface (``adapter``: phase.rs through phase-python; state, legal actions,
apply, copies, determinization), the engine's card data (``carddata``), what one seat may see (``seatview``) and
the sample decks (``decks``). Imports nothing else of the project."""
