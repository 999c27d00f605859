"""A labelled set for the write router, written for the test (not the article's four items).

Varied wording: first and third person, with and without time markers,
imperatives and declarative rules, terse notes and chatty sentences.
"""

LABELLED: list[tuple[str, str]] = [
    # semantic: durable facts about the user or the world
    ("My name is Priya Raman and I'd rather be reached by text message.", "semantic"),
    ("I'm Tomasz, I prefer phone calls over email.", "semantic"),
    ("Call me Lee; I prefer Slack for anything urgent.", "semantic"),
    ("The customer's account is billed in EUR, not USD.", "semantic"),
    ("Dana lives in Lisbon and works as a nurse.", "semantic"),
    ("I am allergic to peanuts.", "semantic"),
    ("Our support line is open Monday to Friday, 9 to 5 Central European Time.", "semantic"),
    ("The user speaks Portuguese and English.", "semantic"),
    ("ORD-4410 is a business account with net-30 payment terms.", "semantic"),
    ("The staging cluster runs Kubernetes 1.29.", "semantic"),
    ("Hello, this is Marco from the Berlin office; please email me, no calls.", "semantic"),
    ("My favourite airline is KLM and my seat preference is aisle.", "semantic"),
    # episodic: things that happened, usually with a time marker
    ("Yesterday the customer reported that the package arrived damaged.", "episodic"),
    ("At 14:05 the payment webhook returned HTTP 502 three times.", "episodic"),
    ("The user cancelled order ORD-1287 this morning.", "episodic"),
    ("Last week Priya asked for an invoice copy and we sent it.", "episodic"),
    ("Deploy 2024-03-11 rolled back after the health check failed.", "episodic"),
    ("Tomasz called two hours ago to complain about a double charge.", "episodic"),
    ("Earlier today the agent escalated ticket T-552 to tier 2.", "episodic"),
    ("On Monday the refund for ORD-2001 was issued.", "episodic"),
    ("The user just uploaded a photo of the broken hinge.", "episodic"),
    ("We shipped the replacement part on March 3.", "episodic"),
    ("Lee said during the call that the courier never showed up.", "episodic"),
    ("The database failover happened overnight and took 40 seconds.", "episodic"),
    # procedural: reusable how-to rules
    ("Always confirm the order number before issuing a refund.", "procedural"),
    ("To reset a customer's password, send the magic link from the admin panel, never by email text.", "procedural"),
    ("If a package is reported lost, wait 5 business days, then file a carrier claim.", "procedural"),
    ("Orders over $500 need a supervisor's approval before refunding.", "procedural"),
    ("When the webhook returns 502, retry with exponential backoff up to three times.", "procedural"),
    ("Express shipping costs $15; add it to the subtotal before tax.", "procedural"),
    ("Never promise a delivery date for backordered items.", "procedural"),
    ("Escalate any chargeback dispute to the billing team within 24 hours.", "procedural"),
    ("Discount codes cannot be combined; apply only the larger one.", "procedural"),
    ("Use the EU VAT rate of 21% for shipments to the Netherlands.", "procedural"),
    ("Step 1: verify identity. Step 2: check the order status. Step 3: offer a fix.", "procedural"),
    ("Refunds to gift cards must be split by the original payment share.", "procedural"),
    # working: the current focus
    ("Drafting the apology email to Tomasz right now.", "working"),
    ("Currently checking the carrier status for ORD-1287.", "working"),
    ("Working on the refund calculation for Priya's order at the moment.", "working"),
    ("Now comparing the two invoices to find the double charge.", "working"),
    ("Current task: schedule the replacement delivery for Lee.", "working"),
    ("I'm in the middle of verifying the customer's identity.", "working"),
    ("Next step is to ask the warehouse for the tracking number.", "working"),
    ("Focus for this session: close out ticket T-552.", "working"),
    ("Waiting on the supervisor's approval for the $620 refund now.", "working"),
    ("Preparing a quote for the bulk order this turn.", "working"),
]
