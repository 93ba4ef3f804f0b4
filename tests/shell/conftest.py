import os
import sys

# the shared test helpers (_fake_session) live one folder up
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
