import sys

from dscodec.cli import main

sys.exit(main())
