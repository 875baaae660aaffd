"""Send live text-to-SQL queries to Docket in batches, never blocking or failing the caller.

    from docket_client import DocketClient
    docket = DocketClient("https://docket.example.com", token="dkt_...")
    docket.log_query(question="Revenue last month?", sql="SELECT ...", warehouse="shop")

`AsyncDocketClient` does the same for asyncio applications. Both count what happened in
`client.stats` and log problems to the `docket_client` logger.
"""

from docket_client._delivery import ClientStats
from docket_client.aio import AsyncDocketClient
from docket_client.client import DocketClient

__all__ = ["AsyncDocketClient", "ClientStats", "DocketClient"]
__version__ = "0.1.0"
