"""The analyses above the warehouse: statistics (`stats`), typed queries that compare and score runs (`queries`), the
answer-presence audit's estimates (`audit`) and the paper reports (`report`). They read the warehouse; it never
imports them."""
