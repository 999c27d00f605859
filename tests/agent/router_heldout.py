"""A second labelled set, written after the rules were fixed and scored without changing them.

Reported beside the main set so the accuracy is not only the author's own tuning set.
"""

HELDOUT: list[tuple[str, str]] = [
    ("Hey there, Samira here. Texts work best for me.", "semantic"),
    ("The warehouse in Rotterdam handles all EU returns.", "semantic"),
    ("Kofi is vegetarian.", "semantic"),
    ("The premium plan includes two free replacements a year.", "semantic"),
    ("Her billing address is in Quebec.", "semantic"),
    ("I work night shifts, so mornings are bad for calls.", "semantic"),
    ("Samira's laptop stopped charging after the firmware update last Tuesday.", "episodic"),
    ("The courier left the parcel with a neighbour at 18:40.", "episodic"),
    ("Kofi opened a chat about a missing voucher twenty minutes ago.", "episodic"),
    ("Payment for ORD-9001 bounced this afternoon.", "episodic"),
    ("The agent promised a callback during yesterday's chat.", "episodic"),
    ("Support closed ticket T-88 without a reply.", "episodic"),
    ("For damaged items, ask for a photo first, then offer a replacement.", "procedural"),
    ("Never share tracking numbers with anyone but the account holder.", "procedural"),
    ("Loyalty members get free returns; waive the fee for them.", "procedural"),
    ("Convert prices with the daily ECB rate when the customer pays in GBP.", "procedural"),
    ("Refund shipping only if the item arrived broken.", "procedural"),
    ("Check the fraud score before approving any refund above $300.", "procedural"),
    ("Looking up Samira's warranty status now.", "working"),
    ("At the moment I'm reconciling the voucher balance for Kofi.", "working"),
    ("Busy writing the follow-up message for ticket T-88.", "working"),
    ("Current focus: get the ORD-9001 payment retried.", "working"),
    ("Still waiting for the warehouse to confirm stock.", "working"),
    ("Now estimating the delivery window for the replacement.", "working"),
]
