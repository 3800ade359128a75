"""Defect switches for the conformance kit's mutation matrix (scripts/mutation-matrix.ts).

``MUTANT`` names one defect to switch on; the empty string (the default) switches none. The library never sets it:
only the example adapter does, from ``TJ_MUTANT``, so that the kit can show it catches each defect in this code.
"""

MUTANT = ""
