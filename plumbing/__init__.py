"""The site's plumbing, below the apps: API errors and bodies, abuse limits, live rows and jobs, recovery,
progress bars, staff and guest helpers, the device, the channel layer. It imports no app and not the project
(``mtgsite``); the apps import it."""
