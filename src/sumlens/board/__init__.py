"""The dashboard: follows the runs under a base directory and shows them in the browser.

``sumlens start --summary-base-dir DIR`` serves it (see :mod:`sumlens.board.server.daemon`). The
viewer imports only :mod:`sumlens.io` and the protobuf modules: it never needs torch.
"""
